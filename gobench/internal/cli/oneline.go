package cli

import "strings"

// OneLine returns msg with its line breaks replaced by "; ": the program
// reports an error on exactly one line of stderr, and some drivers' messages
// span several.
func OneLine(msg string) string {
	if !strings.ContainsAny(msg, "\r\n") {
		return msg
	}
	return strings.NewReplacer("\r\n", "; ", "\n\t", "; ", "\n", "; ", "\r", "; ").Replace(msg)
}
