package httpecho

import (
	"bytes"
	"net/http"
	"testing"

	"golang.org/x/net/websocket"
	confws "sigs.k8s.io/gateway-api/conformance/utils/websocket"
)

// TestWebSocket dials with the suite's dialer, sends what
// HTTPRouteBackendProtocolWebSocket sends, and checks that each message
// comes back whole and with its frame type.
func TestWebSocket(t *testing.T) {
	addr := serve(t, Plain, nil)
	ws, err := (&confws.DefaultDialer{}).Dial("ws://"+addr+"/ws", "", "ws://gateway/TestWebSocket")
	if err != nil {
		t.Fatalf("dial: %v", err)
	}
	defer ws.Close()
	tests := []struct {
		name string
		sent frame
	}{
		{"text", frame{websocket.TextFrame, []byte("Websocket Support!")}},
		{"binary", frame{websocket.BinaryFrame, []byte{1, 2, 3, 4, 5, 6, 7}}},
		{"empty text", frame{websocket.TextFrame, nil}},
		{"large binary", frame{websocket.BinaryFrame, bytes.Repeat([]byte{0xfe}, 70000)}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			if err := frames.Send(ws, &tc.sent); err != nil {
				t.Fatalf("send: %v", err)
			}
			var got frame
			if err := frames.Receive(ws, &got); err != nil {
				t.Fatalf("receive: %v", err)
			}
			if got.kind != tc.sent.kind || !bytes.Equal(got.data, tc.sent.data) {
				t.Errorf("got frame type %d with %d bytes, want type %d with %d bytes", got.kind, len(got.data), tc.sent.kind, len(tc.sent.data))
			}
		})
	}
	t.Run("suite's message codec", func(t *testing.T) {
		var reply string
		if err := websocket.Message.Send(ws, "hello"); err != nil {
			t.Fatal(err)
		}
		if err := websocket.Message.Receive(ws, &reply); err != nil || reply != "hello" {
			t.Fatalf("got %q, %v; want \"hello\"", reply, err)
		}
	})
}

// TestWebSocketNeedsOrigin: a handshake without an Origin header is
// refused with 403, as golang.org/x/net/websocket.Handler (echo-basic's)
// refuses it.
func TestWebSocketNeedsOrigin(t *testing.T) {
	addr := serve(t, Plain, nil)
	req, _ := http.NewRequest(http.MethodGet, "http://"+addr+"/ws", nil)
	req.Header.Set("Upgrade", "websocket")
	req.Header.Set("Connection", "Upgrade")
	req.Header.Set("Sec-WebSocket-Version", "13")
	req.Header.Set("Sec-WebSocket-Key", "dGhlIHNhbXBsZSBub25jZQ==")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusForbidden {
		t.Fatalf("status %d, want 403", resp.StatusCode)
	}
}
