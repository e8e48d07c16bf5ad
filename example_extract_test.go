package loopbreaker_test

import (
	"fmt"

	"github.com/loopbreaker/loopbreaker"
)

// An agent's stream-JSON output: its chatter and a successful result mention
// errors, but only the tool result marked "is_error": true is one. The error
// block inside it is returned, without the exit code and the build's
// package line around it.
func ExampleExtractError() {
	output := `{"type":"assistant","message":{"content":[{"type":"text","text":"Refactoring the error handling; expecting 0 errors."}]}}
{"type":"user","message":{"content":[{"type":"tool_result","is_error":true,"content":"Exit code 1\n# example.com/app\n./main.go:12:3: undefined: loadUser"}]}}
{"type":"result","subtype":"success","is_error":false,"result":"loadUser is missing; adding it next."}`

	fmt.Println(loopbreaker.ExtractError(output))

	// The same failure as plain text, at another line, with other chatter.
	plain := "$ go build ./...\n# example.com/app\n./main.go:40:3: undefined: loadUser\nno errors found elsewhere\n"
	fmt.Println(loopbreaker.ExtractError(plain))
	fmt.Println(loopbreaker.Fingerprint(loopbreaker.ExtractError(output)) ==
		loopbreaker.Fingerprint(loopbreaker.ExtractError(plain)))

	fmt.Printf("%q\n", loopbreaker.ExtractError("All tests pass: 0 errors, no errors found."))
	// Output:
	// ./main.go:12:3: undefined: loadUser
	// ./main.go:40:3: undefined: loadUser
	// true
	// ""
}
