package httpecho

import (
	"log/slog"
	"net/http"

	"golang.org/x/net/websocket"
)

// frame is one WebSocket message with its frame type (text or binary).
type frame struct {
	kind byte
	data []byte
}

// frames is a codec that keeps the frame type of a message, so a binary
// message comes back binary and a text message text.
var frames = websocket.Codec{
	Marshal: func(v any) ([]byte, byte, error) {
		f := v.(*frame)
		return f.data, f.kind, nil
	},
	Unmarshal: func(data []byte, kind byte, v any) error {
		f := v.(*frame)
		f.kind, f.data = kind, append(f.data[:0], data...)
		return nil
	},
}

// webSocket returns the /ws handler: it accepts a WebSocket handshake whose
// Origin is a valid URL (golang.org/x/net/websocket's check, which
// echo-basic uses too) and sends every message back until the client
// closes.
func webSocket(log *slog.Logger) http.Handler {
	return websocket.Handler(func(ws *websocket.Conn) {
		log.Info("websocket connection", "remote", ws.Request().RemoteAddr)
		var f frame
		for frames.Receive(ws, &f) == nil {
			if frames.Send(ws, &f) != nil {
				return
			}
		}
	})
}
