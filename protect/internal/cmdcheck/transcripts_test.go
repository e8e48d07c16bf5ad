package cmdcheck

import "testing"

// Commands that agents ran, as their users reported them. Paths outside
// the test project are kept; paths in the reporter's project are moved into
// /home/agent/app (the reports' own project layouts are given alongside).

func TestCommandsFromAgentIncidentReports(t *testing.T) {
	runRows(t, newChecker(t, Options{}), []checkRow{
		// anthropics/claude-code#61519: a cleanup step of a commit script.
		{"rm -rf ~ in a commit script", "cd /home/agent/app && git add . 2>&1 | tail -3\nrm -rf ~ 2>/dev/null\ngit status --short",
			".loopbreaker", "rm -rf removes /home/agent, which holds protected"},
		// anthropics/claude-code#93099: test cleanup.
		{"rm -rf \"$HOME\"", `rm -rf "$HOME"`, ".loopbreaker", ""},
		// anthropics/claude-code#49464: removing swap files, then a
		// directory literally named ~ (the user stopped the second command).
		{"removing swap files", "rm -f .blah.swp .gitignore.swp", "", ""},
		{"rm -f ~/ cannot remove a directory without -r", "rm -f ~/", "", ""},
		{"the directory named ~, quoted", "rm -rf './~'", "", ""},
		// anthropics/claude-code#12637: rm -rf * in the directory that held
		// both the project and a directory named ~.
		{"rm -rf * one level up", "cd .. && rm -rf *", ".loopbreaker", "may remove /home/agent/*, which may hold protected"},
		// anthropics/claude-code#15951: a multi-line command whose rm was
		// aimed at a subdirectory (the report suspects the parent went).
		{"rm -rf of a build subdirectory", "rm -rf /home/agent/app/apps/myapp/swift-frontend/build/DerivedData-brad\necho \"Cleared DerivedData-brad\"\nmake -C /home/agent/app/apps/myapp build-brad 2>&1 | tail -10", "", ""},
		// anthropics/claude-code#10978: rm -rf of a scripts directory.
		{"rm -rf of a scripts directory", "rm -rf /home/agent/app/scripts\necho \"Scripts folder deleted from project\"\nls -la /home/agent/app/ | grep scripts", "", ""},
		// anthropics/claude-code#55205: rm -rf of a directory assumed empty,
		// errors hidden (there /Users/mla/_greek/mm; here the memory directory).
		{"rm -rf of a directory assumed empty", "rm -rf /home/agent/app/memory 2>/dev/null", "memory", ""},
		// anthropics/claude-code#13278: a long find one-liner with rm -rf /*
		// buried in it (reconstructed around the part the report quotes).
		{"rm -rf /* inside find -exec", "find /home/agent/Library/Developer/CoreSimulator/Devices -type d -name T -exec rm -rf /* \\;", ".loopbreaker", ""},
		// anthropics/claude-code#49129: files moved into a subfolder, then
		// the parent removed; nothing protected was there.
		{"moving into a subfolder, then removing the parent", "mkdir -p sd_auto_generate/log && mv sd_auto_generate/*.png sd_auto_generate/log/ && rm -rf sd_auto_generate/", "", ""},
		// anthropics/claude-code#23913: PowerShell removal: a program the
		// checker does not judge.
		{"PowerShell Remove-Item", `powershell -Command "Get-ChildItem -Recurse -Filter '*.md' | Remove-Item -Force"`, "", ""},
		// anthropics/claude-code#46058: shutil.rmtree, then rm -rf of the
		// folder holding the only copies.
		{"python's rmtree is not seen", `python3 -c "import shutil; shutil.rmtree('catalog')"`, "", ""},
		// anthropics/claude-code#89787: a download run without cd.
		{"a python download", `python -c "from huggingface_hub import snapshot_download; snapshot_download(repo_id='m-a-p/MusicPile-sft', repo_type='dataset', local_dir='./data/m-a-p_MusicPile-sft')"`, "", ""},
		// kirodotdev/Kiro#6049: reverting its own changes, and the user's.
		{"git checkout .", "git checkout .", ".loopbreaker", ""},
		// Field-Guide/construction-inspector-tracking-app#86: reverting a
		// directory wiped unrelated work in it.
		{"git checkout -- dir", "git checkout -- specs", "specs", ""},
		// StefanMaron/BusinessCentral.AL.Runner#2196: a red baseline, then
		// a restore from HEAD of an uncommitted fix.
		{"a baseline from another commit", "git checkout HEAD~1 -- IMPLEMENTATION_PLAN.md", "IMPLEMENTATION_PLAN.md", "overwrites"},
		{"restoring from HEAD", "git checkout HEAD -- IMPLEMENTATION_PLAN.md", "IMPLEMENTATION_PLAN.md", "discards changes"},
		// objectstack-ai/objectui#4301: reverse verification on an
		// uncommitted file.
		{"checking out a file from origin/main", "git checkout origin/main -- FormPage.tsx", "", ""},
		// netresearch/git-workflow-skill#254: stash as a baseline.
		{"git stash push of one file", "git stash push -- config/app.php", "", ""},
		{"git stash push of the plan", "git stash push -- IMPLEMENTATION_PLAN.md", "IMPLEMENTATION_PLAN.md", ""},
		// AndyMik90/Aperant#1477: git clean -fd on a QA rejection.
		{"git clean -fd", "git clean -fd", ".loopbreaker", ""},
		// laurigates/claude-plugins#225: resetting main after pushing.
		{"git reset --hard", "git reset --hard origin/main", ".loopbreaker", "overwrites"},
		// disler/claude-code-hooks-mastery#4: the ways an agent got around a
		// hook that blocked rm.
		{"a test file", "rm -rf test-file-for-rm-hook.txt", "", ""},
		{"rm by full path", "/bin/rm AGENTS.md", "AGENTS.md", ""},
		{"rm inside bash -c", `bash -c "rm -rf specs"`, "specs", ""},
		{"rm in a script written and run", "echo 'rm -rf specs' > /tmp/x.sh && bash /tmp/x.sh", "", ""},
		{"rm through find -delete", "find . -name AGENTS.md -delete", ".loopbreaker", ""},
		{"unlink", "unlink AGENTS.md", "AGENTS.md", ""},
		{"truncating instead", "> AGENTS.md", "AGENTS.md", ""},
	})

	// GoogleCloudPlatform/scion#884: git clean -fdx removed the agent's
	// ignored state directory; -fd would have kept it.
	ignoredState := newChecker(t, Options{Git: gitStates(map[string]GitState{
		".loopbreaker": Ignored,
		"specs":        Tracked,
	})})
	runRows(t, ignoredState, []checkRow{
		{"git clean -fd keeps ignored state", "git clean -fd", "", ""},
		{"git clean -fdx removes it", "git clean -fdx", ".loopbreaker", "(ignored)"},
	})
}
