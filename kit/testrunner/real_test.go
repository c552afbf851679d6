package testrunner

import (
	"encoding/json"
	"testing"

	"github.com/goa2a/a2a/agents/execagent"
)

func TestParseGoTest(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name   string
		output string
		want   string
	}{
		{
			name: "without -v",
			output: "--- FAIL: TestBad (0.00s)\n    a_test.go:6: first\n    a_test.go:6: boom\nFAIL\n" +
				"FAIL\texample.com/t/a\t0.006s\nok  \texample.com/t/d\t0.01s\nok  \texample.com/t/e\t(cached)\n" +
				"# example.com/t/b [example.com/t/b.test]\nb/b.go:1:34: cannot use \"s\"\n" +
				"FAIL\texample.com/t/b [build failed]\n?   \texample.com/t/c\t[no test files]\nFAIL\n",
			want: `{"passed":2,"failed":2,"failures":[{"test":"TestBad","package":"example.com/t/a","error":"a_test.go:6: boom"},` +
				`{"package":"example.com/t/b","error":"build failed"}],"unit":"package","exitCode":1}`,
		},
		{
			name: "with -v",
			output: "=== RUN   TestGood\n--- PASS: TestGood (0.00s)\n=== RUN   TestBad\n    a_test.go:6: first\n    a_test.go:6: boom\n" +
				"--- FAIL: TestBad (0.00s)\n=== RUN   TestSub\n=== RUN   TestSub/x\n=== RUN   TestSub/y\n    a_test.go:7: later\n" +
				"--- PASS: TestSub (0.00s)\n    --- PASS: TestSub/x (0.00s)\n    --- SKIP: TestSub/y (0.00s)\nFAIL\nFAIL\texample.com/t/a\t0.006s\nFAIL\n",
			want: `{"passed":3,"failed":1,"skipped":1,"failures":[{"test":"TestBad","package":"example.com/t/a","error":"a_test.go:6: boom"}],"unit":"test","exitCode":1}`,
		},
		{
			name:   "all ok",
			output: "ok  \texample.com/t/a\t0.006s\nok  \texample.com/t/b\t0.01s",
			want:   `{"passed":2,"failed":0,"failures":[],"unit":"package","exitCode":1}`,
		},
	} {
		t.Run(tc.name, func(t *testing.T) {
			// Feed the output in awkward pieces: parsing must not depend
			// on where reads end.
			var p goTestParser
			for i := 0; i < len(tc.output); i += 7 {
				p.feed([]byte(tc.output[i:min(i+7, len(tc.output))]))
			}
			p.end()
			sum := p.summary(&execagent.Result{ExitCode: 1})
			got, _ := json.Marshal(sum)
			if string(got) != tc.want {
				t.Errorf("summary\n got %s\nwant %s", got, tc.want)
			}
		})
	}
}

func TestSummaryText(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		s    Summary
		want string
	}{
		{Summary{Passed: 13, Unit: "test"}, "13 passed"},
		{Summary{Passed: 11, Failed: 1, Unit: "test"}, "1 failed, 11 passed"},
		{Summary{Passed: 1, Unit: "package"}, "1 package passed"},
		{Summary{Passed: 3, Unit: "package"}, "3 packages passed"},
		{Summary{Passed: 2, Failed: 1, Unit: "package"}, "1 of 3 packages failed"},
	} {
		if got := tc.s.text(); got != tc.want {
			t.Errorf("%+v: %q, want %q", tc.s, got, tc.want)
		}
	}
}
