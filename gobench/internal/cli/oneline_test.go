package cli

import "testing"

func TestOneLine(t *testing.T) {
	cases := map[string]string{
		"plain":                      "plain",
		"failed to connect:\n\tdial": "failed to connect:; dial",
		"a\r\nb\nc\rd":               "a; b; c; d",
		"":                           "",
	}
	for in, want := range cases {
		if got := OneLine(in); got != want {
			t.Errorf("OneLine(%q) = %q, want %q", in, got, want)
		}
	}
}
