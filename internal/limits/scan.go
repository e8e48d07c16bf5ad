package limits

import (
	"net/http"
	"sort"
	"strings"
	"time"
)

// The scanner reads a window of text once, front to back, a line at a
// time, the way text/template/parse's lexer reads a template. Most text
// holds no limit, and the scan must cost about what fingerprinting the
// same text costs (it runs on every failed iteration), so the pass over
// the bytes only looks for the words that limit messages are made of
// (hasAnchor): "limit", "quota", "exhausted", "overloaded", "429", ... A
// text without any is no limit, found without allocating.
//
// A line with such a word marks a region: the line with the lines around
// it in its paragraph, a message and its context (a reset on the next
// line, a JSON body over several). Only the last maxRegions regions are
// read closely (decide): the built-in rules find the signs of a limit in
// each, the region's words overrule or qualify them (a request too large,
// a test's failure, a quota of a day or of zero), and each sign's reset is
// read from the words after it.
//
// Lines that are stream-json events (Claude Code's --output-format
// stream-json) are read as events: a "user" event's tool results are left
// out, as they may only quote a limit (ralph-claude-code's bug #183); a
// rejected rate_limit_event and a result with api_error_status 429 or 529
// are limits by themselves; the texts of "result" and "assistant" events
// are regions of their own, where a message counts only on the first line.
// An event also ends the plain paragraph before it. A JSON line of another
// kind (an API error body) is plain text.

// maxRegions is how many regions, the last in the window, are read
// closely.
const maxRegions = maxHits

// contextLines is how many lines of its paragraph before and after a line
// with a limit's words are read with it.
const contextLines = 8

// maxRegion bounds a region's size, in bytes (a single longer line is read
// whole).
const maxRegion = 4 << 10

// shortWait is the longest a Wait may last and be a usage window: one
// whose reset is sooner is a throttle ("Your quota will reset after 2s"),
// except a subscription's window its headers name.
const shortWait = time.Minute

// maxResetScan bounds how far after a sign its reset is looked for.
const maxResetScan = 2 << 10

// A region is a stretch of text that may hold a limit message, or a
// finding that a stream-json event gave by itself.
type region struct {
	text string
	// firstLine: the text came from an event, where a limit message is the
	// whole text; a sign counts only on its first line that is not blank.
	firstLine bool
	event     *finding
}

// scanner is the state of one pass over a window. It allocates nothing
// until it reads an event or finds a region.
type scanner struct {
	w   string
	now time.Time

	// The last regions, a ring: regions[i%maxRegions] for i < n.
	regions [maxRegions]region
	n       int

	// The plain paragraph being read: where it starts, and the starts of
	// its last contextLines lines (a ring, lines of them).
	para   int
	starts [contextLines]int
	lines  int

	// heading: the last line read was a Markdown heading, whose
	// paragraph runs on past the blank line after it ("## Review limit
	// reached", then its wait).
	heading bool

	// The region being gathered in it: w[from:to], and the lines read
	// since its last line with a limit's words. done is where the last
	// region ended: a region never reads text twice.
	gathering bool
	from, to  int
	after     int
	done      int
}

// read reads the window, line by line.
func (s *scanner) read() {
	for start := 0; start < len(s.w); {
		end := strings.IndexByte(s.w[start:], '\n')
		if end < 0 {
			end = len(s.w)
		} else {
			end += start
		}
		s.line(start, end)
		start = end + 1
	}
	s.endParagraph(len(s.w))
}

// line reads the line w[start:end].
func (s *scanner) line(start, end int) {
	if end > start && s.w[end-1] == '\r' {
		end--
	}
	line := s.w[start:end]
	if isObjectLine(line) && s.event(line) {
		s.endParagraph(end + 1)
		return
	}
	if strings.TrimSpace(line) == "" {
		if !s.heading {
			s.endParagraph(end + 1)
		}
		return
	}
	s.heading = isHeading(line)
	s.plain(start, end)
}

// plain reads the plain line w[start:end] of the paragraph.
func (s *scanner) plain(start, end int) {
	anchored := hasAnchor(s.w[start:end])
	switch {
	case anchored && s.gathering && end-s.from <= maxRegion:
		s.to, s.after = end, 0
	case anchored:
		s.flush()
		s.from = s.contextStart(start, end)
		s.to, s.after, s.gathering = end, 0, true
	case s.gathering && s.after < contextLines && end-s.from <= maxRegion:
		s.to = end
		s.after++
	default:
		s.flush()
	}
	s.starts[s.lines%contextLines] = start
	s.lines++
}

// contextStart is where a region whose first line with a limit's words
// is w[start:end] begins: up to contextLines lines before it in its
// paragraph, within maxRegion, and after the last region.
func (s *scanner) contextStart(start, end int) int {
	from := start
	for k := 1; k <= contextLines && k <= s.lines; k++ {
		prev := s.starts[(s.lines-k)%contextLines]
		if prev < s.para || prev < s.done || end-prev > maxRegion {
			break
		}
		from = prev
	}
	return from
}

// flush ends the region being gathered.
func (s *scanner) flush() {
	if !s.gathering {
		return
	}
	s.gathering = false
	s.add(region{text: s.w[s.from:s.to]})
	s.done = s.to
}

// endParagraph ends the paragraph; the next one starts at next.
func (s *scanner) endParagraph(next int) {
	s.flush()
	s.para, s.lines, s.heading = next, 0, false
}

// isHeading reports whether line is a Markdown heading ("## Rate limit
// exceeded"), in a quote or not.
func isHeading(line string) bool {
	i := 0
	for i < len(line) && (line[i] == ' ' || line[i] == '\t' || line[i] == '>') {
		i++
	}
	n := 0
	for i+n < len(line) && n < 6 && line[i+n] == '#' {
		n++
	}
	return n > 0 && i+n < len(line) && line[i+n] == ' '
}

// add keeps r among the last maxRegions regions.
func (s *scanner) add(r region) {
	s.regions[s.n%maxRegions] = r
	s.n++
}

// isObjectLine reports whether line is a JSON object: the whole line, or
// its end from the first `{"` on, as when a host writes "exit status 1:
// {...}".
func isObjectLine(line string) bool {
	t := strings.TrimSpace(line)
	i := strings.IndexByte(t, '{')
	return i >= 0 && strings.HasSuffix(t, "}") && (i == 0 || strings.HasPrefix(t[i:], `{"`))
}

// event reads a line that is a JSON object, and reports whether it is a
// stream-json event (read here) rather than plain text (an API error body,
// read with the lines around it).
func (s *scanner) event(line string) bool {
	t := strings.TrimSpace(line)
	if strings.HasPrefix(t, `{"type":"user"`) {
		return true // a tool result: left out unread
	}
	if !hasAnchor(t) {
		// Nothing a limit is made of. An event still parts the text around
		// it, and other JSON can be let be: it holds no sign either.
		return strings.HasPrefix(t, `{"type":"`)
	}
	ev, ok := decodeEvent(line)
	if !ok {
		return false
	}
	var result string
	isResult := ev.Type == "result" || ev.Type == "" && unmarshal(ev.Result, &result)
	switch {
	case ev.Type == "user":
	case ev.Type == "rate_limit_event":
		s.flush()
		if f, ok := rateLimitEvent(ev.RateLimitInfo, s.now); ok {
			s.add(region{event: &f})
		}
	case isResult:
		s.flush()
		if f, ok := resultStatus(ev); ok {
			s.add(region{event: &f})
		}
		if unmarshal(ev.Result, &result) {
			s.eventText(result)
		}
	case ev.Type == "assistant":
		s.flush()
		for _, text := range assistantTexts(ev.Message) {
			s.eventText(text)
		}
	default:
		return false
	}
	return true
}

// eventText reads the text of an event as a region of its own.
func (s *scanner) eventText(text string) {
	if hasAnchor(text) {
		s.add(region{text: text, firstLine: true})
	}
}

// A sign is a rule's match in a region's text: a limit, or an event's.
type sign struct {
	r    region
	rule *rule
	m    []int
	next int // where the next sign in the region begins, or its end

	daily      bool        // a quota of a day named on the sign's line or after it (dailyQuota)
	zero       bool        // the region's words: a quota of zero (zeroQuota)
	paid, soon bool        // an HTTP 402 (paid402), a wait of a moment (soonWords)
	china      bool        // Zhipu's words, whose resets are China's time (chinaTime)
	headers    http.Header // the rate-limit headers the region dumps, if any
}

// decide reads the regions closely and returns the limit the window shows
// (see FromText): the last maxHits signs, of which outranks picks. The
// regions are read from the last, until the signs are enough.
func (s *scanner) decide() finding {
	if s.n == 0 {
		return finding{}
	}
	var signs []sign // in reverse text order
	for i := s.n - 1; i >= 0 && i >= s.n-maxRegions && len(signs) < maxHits; i-- {
		r := s.regions[i%maxRegions]
		if r.event != nil {
			signs = append(signs, sign{r: r})
			continue
		}
		found := regionSigns(r)
		for j := len(found) - 1; j >= 0; j-- {
			signs = append(signs, found[j])
		}
	}
	if len(signs) > maxHits {
		signs = signs[:maxHits]
	}
	fs := make([]finding, len(signs))
	for i, g := range signs {
		fs[len(signs)-1-i] = g.finding(s.now)
	}
	return pick(fs)
}

// regionSigns returns the signs of a limit in r, in text order.
func regionSigns(r region) []sign {
	text := r.text
	lower := strings.ToLower(text)
	var signs []sign
	rs := rules()
	for k := range rs {
		rl := &rs[k]
		if !holds(lower, rl.needs) || rl.notIn != nil && anyMatches(rl.notIn(), lower) {
			continue
		}
		for _, m := range rl.re.FindAllStringSubmatchIndex(text, -1) {
			switch {
			case rl.lead && !leads(text, m[0]),
				rl.open && runsOn(text, m[1]),
				rl.field && !inObject(text, m[0]),
				r.firstLine && !onFirstLine(text, m[0]),
				rl.weak && inProseCode(lineBefore(text, m[0])),
				rl.generic && !leads(text, m[0]) && (quoted(text, m[0]) || !errorBefore(text, m[0]) && !inObject(text, m[0])):
				continue
			}
			signs = append(signs, sign{r: r, rule: rl, m: m})
		}
	}
	signs = withoutGenericSigns(signs, lower)
	headers, at := dumpedHeaders(text, lower)
	if _, spent, usage := spentWindows(headers, time.Time{}); spent && !hasWait(signs) {
		rl := &headerRule
		if usage {
			rl = &usageHeaderRule
		}
		signs = append(signs, sign{r: r, rule: rl, m: []int{at, at}})
	}
	if len(signs) == 0 {
		return nil
	}
	if anyMatches(lookalikes(), lower) {
		strong := signs[:0]
		for _, g := range signs {
			if !g.rule.weak {
				strong = append(strong, g)
			}
		}
		signs = strong
	}
	sort.SliceStable(signs, func(a, b int) bool { return signs[a].m[0] < signs[b].m[0] })
	zero := anyMatches(zeroQuota(), lower)
	// A quota's day is read from the sign's line on: a message names its
	// window after its status, and a word before it ("failed embedding:
	// Daily Notes/…" above a 429) is the work's, not the limit's. Lines
	// are counted, not offsets compared: lower-casing may change a text's
	// length, never its lines.
	dayLine := -1
	if at := lastMatch(dailyQuota(), lower); at >= 0 {
		dayLine = strings.Count(lower[:at], "\n")
	}
	line, counted := 0, 0
	paid, soon, china := anyMatches(paid402(), lower), anyMatches(soonWords(), lower), anyMatches(chinaTime(), lower)
	for i := range signs {
		signs[i].next = len(text)
		if i+1 < len(signs) {
			signs[i].next = signs[i+1].m[0]
		}
		line += strings.Count(text[counted:signs[i].m[0]], "\n") // signs are in text order
		counted = signs[i].m[0]
		signs[i].daily = line <= dayLine
		signs[i].zero, signs[i].headers = zero, headers
		signs[i].paid, signs[i].soon, signs[i].china = paid, soon, china
	}
	return signs
}

// withoutGenericSigns drops the signs of generic rules (rule.generic)
// when another rule's sign that is not weak stands among signs, or a weak
// one of the same kind or overlapping them, when lower, the region
// lower-cased, holds a generic look-alike's words (genericLookalikes), or
// when it names no model, provider, agent or model's API (modelContext),
// unless the sign is bare and leads its line.
func withoutGenericSigns(signs []sign, lower string) []sign {
	specific, generic := false, false
	var kinds [Loop + 1]bool // the kinds of the other rules' signs
	for _, g := range signs {
		specific = specific || !g.rule.generic && !g.rule.weak
		kinds[g.rule.kind] = kinds[g.rule.kind] || !g.rule.generic
		generic = generic || g.rule.generic
	}
	if !generic {
		return signs
	}
	fallback := !specific && !anyMatches(genericLookalikes(), lower)
	named := fallback && anyMatches(modelContext(), lower)
	kept := signs[:0]
	for _, g := range signs {
		if !g.rule.generic || (named || fallback && g.rule.bare && leads(g.r.text, g.m[0])) && !kinds[g.rule.kind] && !overlapped(g, signs) {
			kept = append(kept, g)
		}
	}
	return kept
}

// overlapped reports whether the generic sign g stands within another
// rule's sign among signs: that rule's words say it first.
func overlapped(g sign, signs []sign) bool {
	for _, o := range signs {
		if !o.rule.generic && g.m[0] < o.m[1] && o.m[0] < g.m[1] {
			return true
		}
	}
	return false
}

// hasWait reports whether one of signs is a Wait's.
func hasWait(signs []sign) bool {
	for _, g := range signs {
		if g.rule.kind == Wait {
			return true
		}
	}
	return false
}

// holds reports whether lower, a lower-cased text, contains all of words.
func holds(lower string, words []string) bool {
	for _, w := range words {
		if !strings.Contains(lower, w) {
			return false
		}
	}
	return true
}

// finding is what the sign g says, its reset read against now.
func (g sign) finding(now time.Time) finding {
	if g.rule == nil {
		return *g.r.event
	}
	text, rl := g.r.text, g.rule
	f := finding{kind: rl.kind, why: rl.describe(text, g.m), throttle: rl.throttle}
	if f.kind == Wait && rl.generic && strings.Contains(strings.ToLower(text[g.m[0]:g.m[1]]), "rate") {
		f.throttle = true // a window's words that name a rate limit
	}
	if f.kind == Wait && rl.generic && g.paid {
		return finding{kind: Stop, why: f.why + " (HTTP 402)"} // a window behind a 402: a person pays
	}
	if f.kind == Wait && f.throttle && (rl.weak || rl.daily) && g.daily {
		f.throttle = false // a generic sign whose quota is a day's: a usage window
	}
	if f.kind == Wait && !f.throttle && rl.generic && g.soon {
		f.throttle = true // plain words that say to wait a moment: a throttle
	}
	if f.kind == Wait || rl.capped {
		end := min(g.next, g.m[0]+maxResetScan)
		if end < g.m[1] {
			end = g.m[1]
		}
		at := now
		if g.china {
			at = now.In(shanghai()) // Zhipu's resets are China's time
		}
		f.reset = findReset(text[g.m[0]:end], at, f.throttle)
		if !f.reset.named && f.kind == Wait && g.headers != nil {
			f.reset = headerReset(g.headers, now) // the region's dumped headers
		}
	}
	if f.kind == Wait && rl != &usageHeaderRule && !g.daily && f.reset.ok && f.reset.at.Sub(now) <= shortWait {
		// A limit that lifts in seconds is a capacity throttle; a
		// subscription's window its headers say is spent is not, whatever
		// its retry-after.
		f.throttle = true
	}
	if rl.capped {
		f.kind = Stop
		if f.reset.named {
			f.kind = Wait
		}
	}
	if f.kind == Wait && g.zero {
		f = finding{kind: Stop, why: f.why + " (a quota of 0)"}
	}
	return f
}

// hasAnchor reports whether s holds a word that limit messages are made
// of (anchors), in any case. It is the scanner's pass over the bytes, and
// must cost little on text that holds none: at each byte it looks up the
// byte and the next in a table of the pairs of bytes that anchors are
// keyed by (the "mi" of limit, the "qu" of quota: pairs rare in ordinary
// output), and only where a pair stands compares the words around it.
func hasAnchor(s string) bool {
	for i := 0; i+1 < len(s); i++ {
		row := pairRows[s[i]]
		if row == 0 {
			continue
		}
		k := pairs[row%maxPairRows][s[i+1]]
		if k == 0 {
			continue
		}
		for _, a := range pairAnchors[k] {
			if foldAt(s, i-a.at, a.word) {
				return true
			}
		}
	}
	return false
}

// anchors are the words hasAnchor looks for, in lower case: every limit
// message holds one. at is where, in the word, the pair of bytes it is
// keyed by starts: a pair whose first byte is rare in the error output of
// compilers, test runners and stack traces (the m of limit, the q of
// quota, the x of exhaust, the v of overload), so that the scan seldom
// stops, and mispredicts seldom where it does not.
var anchors = []struct {
	word string
	at   int
}{
	{"limit", 2}, {"many", 0}, {"demand", 2}, {"quota", 0}, {"exhaust", 1}, {"overload", 1},
	{"credit", 0}, {"disabled", 4}, {"usage", 3}, {"billing", 0}, {"slow ", 3},
	{"429", 1}, {"529", 1}, {"402", 0},
	// Keyed, where they can be, by a pair whose first byte is one of the
	// above's: a byte that begins no pair costs the scan nothing.
	{"502", 0}, {"503", 0}, {"504", 0},
	{"policy", 4}, {"cyber", 0}, {"blocked", 0}, {"repetitive", 8}, {"insufficient", 7},
	{"loop detected", 9}, {"loop was detected", 13}, {"busy", 0}, {"safeguards", 4},
	{"identical arguments", 12}, {"capacity", 4}, {"límite", 3}, {"public_error_unsafe", 2},
	{"exact same tool", 3}, {"rejected as", 4},
	// A key or login refused: keyed by the ct of "incorrect", the c of
	// "authentication", the v of "valid", the x of "x-api-key" and of
	// "expired", and the 40 of 401.
	{"incorrect api key", 7}, {"pass a valid api key", 7}, {"invalid_api_key", 2}, {"api_key_invalid", 10},
	{"x-api-key", 0}, {"authentication_error", 8}, {"oauth token has expired", 17}, {"401", 0},
	// Keyed by the cc of "access" and of "stuck", the v of "individual",
	// the c of "allocated", "authentication" and "copilot".
	{"have access to the model", 6}, {"model access", 7}, {"stuck in a loop", 3}, {"agentstuckinloop", 8},
	{"individual quota", 4}, {"allocated quota", 4}, {"missing authentication", 16},
	{"authorized to use this copilot", 23}, {"billing account", 0},
	// Keyed by the v of "avoid", the ca of "call" and "identical", the ct
	// of "selected" and "inspection", the x of "exists"; and 使用上限 and
	// 余额不足 by their first bytes.
	{"to avoid a loop", 4}, {"tool call failures", 5}, {"repeated identical", 15},
	{"selected model", 4}, {"inspection", 5}, {"content exists risk", 9}, {"使用上限", 0}, {"余额不足", 0},
	// Keyed by the bytes of the middle dot of Claude Code's banners: a byte
	// that plain ASCII output never holds.
	{"api key ·", 8},
	// Chinese, keyed by the bytes of 不, which both hold.
	{"额度不足", 6}, {"不安全", 0},
	// The plain words the generic rules read (see genericRules), keyed
	// by the bytes of the rows above: the v of "invalid" and
	// "unavailable", the c of "access", "identical" and "action", the m of
	// "harmful" and "moderation". ("payment" has none but the me of
	// ordinary words; HTTP 402 says it.)
	{"invalid api key", 2}, {"api key is invalid", 13}, {"api key not valid", 12}, {"credential", 0},
	{"have access to", 6}, {"identical", 6}, {"tool call", 5}, {"same action", 6},
	{"unavailable", 3}, {"authentication", 8}, {"harmful", 3}, {"moderation", 0},
	// Codex's "upgrade to Plus" and invalid_workspace_selected, keyed by
	// the g of "upgrade" and the v of "invalid".
	{"upgrade to", 2}, {"invalid_workspace_selected", 2},
	// LiteLLM's "budget", Moonshot's "max RPM", and the loop guards' "same
	// arguments" and "this action input": keyed by the bu of "budget", the
	// ma of "max", the gu of "arguments" and the ct of "action".
	{"budget", 0}, {"max rpm", 0}, {"max tpm", 0},
	{"same arguments", 7}, {"this action input", 6},
	// Amazon Q's ThrottlingException and AccessDeniedException, "high
	// traffic", "subscription" (Augment's, and Ollama's "requires a
	// subscription"), Cody's "you've used all", keyed by the x of
	// "exception" and "experiencing", the cc of "access", the cr of
	// "subscription" and the ve of "you've"; 限制 (a limit) and 饱和
	// (saturated) by their first bytes.
	{"throttlingexception", 11}, {"experiencing high", 1}, {"accessdenied", 1}, {"subscription", 4},
	{"ve used all", 0}, {"限制", 0}, {"负载已饱和", 9},
	// Codex's "out of Codex messages" and "access token", Gemini's "not
	// eligible": the co of "codex", the cc of "access", the gi of
	// "eligible".
	{"codex messages", 0}, {"access token", 1}, {"not eligible", 7},
	// crustly's "Detected tool loop", keyed by the ct of "detected";
	// 访问量过大 (traffic too high), 重复 (repeated) and 已过期 (expired) by
	// their bytes.
	{"detected tool loop", 4}, {"访问量过大", 3}, {"重复", 0}, {"已过期", 3},
	// "does not exist" by the xi of "exist", model_not_supported by its mo,
	// "spending cap" by the ca of "cap", 负责任 (responsible) by its first
	// bytes.
	{"does not exist", 10}, {"model_not_supported", 0}, {"负责任", 0}, {"spending cap", 9},
	// A model that is not there: Anthropic's "404 not_found_error" by the 40
	// of 404, Gemini's "not found for API version" by the ve of "version";
	// Open Design's "10x without progress" by the x before it.
	{"404 not_found_error", 0}, {"not found for api version", 18}, {"x without progress", 0},
	// Keyed by the qu of "required", the ba of "balance", the va of
	// "invalid", the mo of "models", the co of "continue" (no rarer pair is
	// in MiMo Code's words) and the cc of "access".
	{"payment required", 10}, {"balance not enough", 0}, {"invalid api token", 2},
	{"free-models-per-day", 5}, {"continue after repeated failures", 0}, {"access to the chat endpoint", 1},
	// Keyed by the ma of "maximum", the vi of "provider", the ge of
	// "arrearage" and of "message", the cc of "account"; 账户 (account)
	// and 请求 (requests) by their first bytes.
	{"maximum number of tool call iterations", 0}, {"response from provider", 17}, {"arrearage", 7},
	{"one message at a time", 9}, {"account is in good standing", 1}, {"账户已欠费", 0}, {"请求", 0},
	// Keyed by the cc of "access" and the ck of "stuck", the cr of
	// "subscribe", the ma of "maximum".
	{"api access paused", 5}, {"key has access to this model", 9}, {"stuck state", 3},
	{"must subscribe to a plan", 9}, {"maximum retry attempts", 0},
	// Keyed by the cc of "access" and "account", the ve of "verification"
	// and "sensitive", the gh of "high", the 20 of iFlytek's code 11200;
	// 访问 (access) and 违规 (a violation) by their first bytes.
	{"all accounts are currently limited", 5}, {"accountoverdue", 1}, {"access to model", 1},
	{"identity verification", 9}, {"sensitive_words_detected", 7}, {"considered high risk", 13},
	{"11200", 2}, {"访问过于频繁", 0}, {"违规", 0},
	// Keyed by the mo of "monthly" and the 40 of 403 and 404; 订阅 (a
	// subscription) by its first bytes.
	{"weekly/monthly", 7}, {"status 404", 7}, {"403 permissiondenied", 0}, {"code 403 from api", 5}, {"订阅套餐", 0},
	// Keyed by the ck of "unacknowledged", the co of "contain" (no rarer
	// pair is in Midscene's words), the qu of "request" and the mi of
	// "permission".
	{"unacknowledged", 3}, {"contain inappropriate content", 0},
	{"request rate is too high", 2}, {"permission 'aiplatform.", 3},
}

// maxPairRows bounds the rows of the pairs table: the first bytes of the
// anchors' pairs.
const maxPairRows = 16

// The tables of hasAnchor: pairRows[c] is the row of the pairs that begin
// with byte c (0: none), pairs[row][c] the index in pairAnchors of the
// anchors keyed by the pair that ends with byte c (0: none). Both cases of
// a letter have the same entries.
var pairRows, pairs, pairAnchors = func() (rows [256]uint8, pairs [maxPairRows][256]uint8, words [][]struct {
	word string
	at   int
}) {
	n := 0
	words = make([][]struct {
		word string
		at   int
	}, 1)
	for _, a := range anchors {
		c0, c1 := a.word[a.at], a.word[a.at+1]
		row := rows[c0]
		if row == 0 {
			n++
			row = uint8(n)
			rows[c0], rows[upper(c0)] = row, row
		}
		k := pairs[row][c1]
		if k == 0 {
			words = append(words, nil)
			k = uint8(len(words) - 1)
			pairs[row][c1], pairs[row][upper(c1)] = k, k
		}
		words[k] = append(words[k], a)
	}
	return rows, pairs, words
}()

// upper is the upper case of an ASCII letter, and any other byte itself.
func upper(c byte) byte {
	if 'a' <= c && c <= 'z' {
		return c - 'a' + 'A'
	}
	return c
}

// foldAt reports whether s holds word, in any case, at s[i:]. word is in
// lower case: letters, digits, spaces and bytes of UTF-8 (which it
// compares as they are).
func foldAt(s string, i int, word string) bool {
	if i < 0 || len(s)-i < len(word) {
		return false
	}
	for j := 0; j < len(word); j++ {
		c := s[i+j]
		if 'A' <= c && c <= 'Z' {
			c += 'a' - 'A'
		}
		if c != word[j] {
			return false
		}
	}
	return true
}
