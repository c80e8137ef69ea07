package snippets

import (
	"errors"
	"fmt"
	"strings"
)

// directive is one nginx directive of a snippet: its name and arguments as
// nginx reads them (quotes removed, escapes resolved), the line it starts
// on, and the directives of its block. The block of a *_by_lua_block
// directive is Lua code: it is skipped, not read as directives.
type directive struct {
	name  string
	args  []string
	line  int
	block []*directive
}

// What ends the words of a directive.
const (
	endDirective = iota // ;
	startBlock          // {
	endBlock            // }
	endText
)

// parseConfig reads a snippet as nginx reads configuration text
// (ngx_conf_read_token and ngx_conf_parse): "#" starts a comment only
// where a word could start, quotes and backslashes hide every special
// character, "{" right after "$" belongs to the word (${var}), and "}"
// ends a block only where a word could start. On an error it returns what
// it read before it, with the error naming the line.
func parseConfig(text string) ([]*directive, error) {
	l := &lexer{text: text, line: 1}
	return l.block(0)
}

// lexer is the reading position in a snippet, and the line of the first
// word of the directive last read.
type lexer struct {
	text     string
	pos      int
	line     int
	wordLine int
}

// block reads directives up to the "}" that ends the block at depth (or the
// end of the text at depth 0).
func (l *lexer) block(depth int) ([]*directive, error) {
	var ds []*directive
	for {
		words, end, err := l.words()
		if err != nil {
			return ds, err
		}
		switch end {
		case endText:
			if depth > 0 {
				return ds, fmt.Errorf("line %d: a block is not closed with }", l.line)
			}
			return ds, nil
		case endBlock:
			if depth == 0 {
				return ds, fmt.Errorf("line %d: } closes no block", l.line)
			}
			return ds, nil
		}
		d := &directive{name: words[0], args: words[1:], line: l.wordLine}
		ds = append(ds, d)
		if end != startBlock {
			continue
		}
		if strings.HasSuffix(d.name, "_by_lua_block") {
			err = l.skipLua()
		} else {
			d.block, err = l.block(depth + 1)
		}
		if err != nil {
			return ds, err
		}
	}
}

// words reads the words of one directive, as ngx_conf_read_token does, and
// what ends it.
func (l *lexer) words() ([]string, int, error) {
	var words []string
	lastSpace, needSpace := true, false
	dQuoted, sQuoted, quoted, variable, comment := false, false, false, false, false
	start := 0
	for {
		if l.pos >= len(l.text) {
			if len(words) > 0 || !lastSpace {
				return nil, 0, fmt.Errorf("line %d: the snippet ends within a directive (no ; or {)", l.line)
			}
			return nil, endText, nil
		}
		ch := l.text[l.pos]
		l.pos++
		if ch == '\n' {
			l.line++
			comment = false
		}
		switch {
		case comment:
			continue
		case quoted:
			quoted = false
			continue
		case needSpace:
			switch ch {
			case ' ', '\t', '\r', '\n':
				lastSpace, needSpace = true, false
				continue
			case ';':
				return words, endDirective, nil
			case '{':
				return words, startBlock, nil
			case ')':
				lastSpace, needSpace = true, false
			default:
				return nil, 0, fmt.Errorf("line %d: unexpected %q after a quoted word", l.line, ch)
			}
		}
		if lastSpace {
			start = l.pos - 1
			if len(words) == 0 {
				l.wordLine = l.line
			}
			switch ch {
			case ' ', '\t', '\r', '\n':
				continue
			case ';', '{':
				if len(words) == 0 {
					return nil, 0, fmt.Errorf("line %d: unexpected %q", l.line, ch)
				}
				if ch == '{' {
					return words, startBlock, nil
				}
				return words, endDirective, nil
			case '}':
				if len(words) > 0 {
					return nil, 0, fmt.Errorf("line %d: unexpected }", l.line)
				}
				return nil, endBlock, nil
			case '#':
				comment = true
				continue
			case '\\':
				quoted = true
			case '"':
				start++
				dQuoted = true
			case '\'':
				start++
				sQuoted = true
			case '$':
				variable = true
			}
			lastSpace = false
			continue
		}
		if ch == '{' && variable {
			continue
		}
		variable = false
		found := false
		switch {
		case ch == '\\':
			quoted = true
			continue
		case ch == '$':
			variable = true
			continue
		case dQuoted:
			if ch == '"' {
				dQuoted, needSpace, found = false, true, true
			}
		case sQuoted:
			if ch == '\'' {
				sQuoted, needSpace, found = false, true, true
			}
		case ch == ' ' || ch == '\t' || ch == '\r' || ch == '\n' || ch == ';' || ch == '{':
			lastSpace, found = true, true
		}
		if !found {
			continue
		}
		words = append(words, unescape(l.text[start:l.pos-1]))
		switch ch {
		case ';':
			return words, endDirective, nil
		case '{':
			return words, startBlock, nil
		}
	}
}

// unescape resolves the escapes nginx resolves in a word: \" \' \\ \t \r
// \n; any other backslash stays.
func unescape(raw string) string {
	if !strings.Contains(raw, `\`) {
		return raw
	}
	var b strings.Builder
	for i := 0; i < len(raw); i++ {
		if raw[i] == '\\' && i+1 < len(raw) {
			switch raw[i+1] {
			case '"', '\'', '\\':
				i++
			case 't':
				b.WriteByte('\t')
				i++
				continue
			case 'r':
				b.WriteByte('\r')
				i++
				continue
			case 'n':
				b.WriteByte('\n')
				i++
				continue
			}
		}
		b.WriteByte(raw[i])
	}
	return b.String()
}

// errLua is a Lua block that does not end.
var errLua = errors.New("a Lua block is not closed with }")

// skipLua skips the Lua code of a *_by_lua_block up to the "}" that ends
// it, as ngx_lua reads it: braces are counted outside strings ('...',
// "...", [[...]], [==[...]==]) and comments (-- to the end of the line,
// --[[...]]).
func (l *lexer) skipLua() error {
	depth := 0
	for l.pos < len(l.text) {
		rest := l.text[l.pos:]
		switch ch := rest[0]; {
		case strings.HasPrefix(rest, "--"):
			l.pos += 2
			if !l.skipLongBracket() {
				l.skipTo("\n")
			}
		case ch == '[':
			if !l.skipLongBracket() {
				l.pos++
			}
		case ch == '"' || ch == '\'':
			if !l.skipString(ch) {
				return fmt.Errorf("line %d: %w (a string does not end)", l.line, errLua)
			}
		case ch == '{':
			depth++
			l.pos++
		case ch == '}':
			l.pos++
			if depth == 0 {
				return nil
			}
			depth--
		default:
			if ch == '\n' {
				l.line++
			}
			l.pos++
		}
	}
	return fmt.Errorf("line %d: %w", l.line, errLua)
}

// skipLongBracket skips a Lua long bracket ([[...]], [=[...]=]) at the
// position, reporting whether there was one.
func (l *lexer) skipLongBracket() bool {
	rest := l.text[l.pos:]
	if !strings.HasPrefix(rest, "[") {
		return false
	}
	level := len(rest[1:]) - len(strings.TrimLeft(rest[1:], "="))
	if !strings.HasPrefix(rest[1+level:], "[") {
		return false
	}
	l.pos += 2 + level
	l.skipTo("]" + strings.Repeat("=", level) + "]")
	return true
}

// skipString skips a quoted Lua string at the position, with its escapes,
// reporting whether it ends.
func (l *lexer) skipString(quote byte) bool {
	for i := l.pos + 1; i < len(l.text); i++ {
		switch l.text[i] {
		case '\\':
			i++
		case '\n':
			l.line++
		case quote:
			l.pos = i + 1
			return true
		}
	}
	return false
}

// skipTo moves past the next end, counting lines; to the end of the text
// when there is none.
func (l *lexer) skipTo(end string) {
	i := strings.Index(l.text[l.pos:], end)
	if i < 0 {
		i = len(l.text) - l.pos
	} else {
		i += len(end)
	}
	l.line += strings.Count(l.text[l.pos:l.pos+i], "\n")
	l.pos += i
}
