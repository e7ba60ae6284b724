package instance

import (
	"bufio"
	"strings"
	"testing"
)

// A server that claims a huge reply is refused before anything is
// allocated for it.
func TestReplyBounds(t *testing.T) {
	tests := []struct {
		name, wire, wantErr string
	}{
		{"a bulk string", "$5\r\nhello\r\n", ""},
		{"a huge bulk string", "$2147483647\r\n", "over the"},
		{"a huge array", "*100000000\r\n", "over the"},
		{"an error", "-ERR no\r\n", "ERR no"},
		{"garbage", "?\r\n", "unexpected reply"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c := &Conn{r: bufio.NewReader(strings.NewReader(tt.wire))}
			_, err := c.reply()
			if (err == nil) != (tt.wantErr == "") || (err != nil && !strings.Contains(err.Error(), tt.wantErr)) {
				t.Errorf("reply(%q) = %v, want error containing %q", tt.wire, err, tt.wantErr)
			}
		})
	}
}
