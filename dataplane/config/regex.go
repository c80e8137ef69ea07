package config

import (
	"fmt"
	"regexp"
	"regexp/syntax"
	"unsafe"
)

// Regex limits. RE2 runs in linear time, but that time is the length of
// the input times the size of the program: one request that reaches an
// application's regex routes runs each of them over the path. So one
// expression, what one request may spend on an application's expressions,
// and the memory of the whole file are bounded.
const (
	// MaxRegexInstructions bounds the program of one regex, counted as Go's
	// regexp counts it (instructions of the compiled program, after the
	// wrapping of CompilePathRegex or CompileValueRegex). The largest path
	// regex of the 284 real-world Ingresses of the migration dry run
	// compiles to 37, the largest example of the ingress-nginx
	// documentation to 22, a path matching a UUID to 60: 512 leaves a
	// margin of 14 over what is used, and takes a literal path of about
	// 500 bytes.
	MaxRegexInstructions = 512
	// RegexWorkBudget bounds what the regexes of one application may cost
	// one request, in instruction-bytes: the instructions of all its path,
	// header and cookie regexes together, times the most bytes each one
	// reads from a request (server.limits.max_regex_input_bytes). A
	// matcher spends at most one step per instruction and byte, so this
	// bounds the CPU of a request whatever the expressions are (about
	// 10 ns a step, see BenchmarkRegexWorstAccepted). With the default
	// input bound of 8 KiB it is 512 instructions per application: five
	// times the largest host of the dry run (104), or about twenty routes
	// of the common form /service(/|$)(.*).
	RegexWorkBudget = 1 << 22
	// DefaultMaxRegexInputBytes is the default of
	// server.limits.max_regex_input_bytes: nginx's (and ingress-nginx's)
	// large_client_header_buffers of 8k, the longest request line nginx
	// reads, so no path nginx would serve is longer.
	DefaultMaxRegexInputBytes = 8 << 10
	MaxRegexProgramBytes      = 1 << 20
	MaxRegexBudgetBytes       = 64 << 20
)

// CompilePathRegex compiles a route's path regex the way the router matches
// it: (?i)^(?:<expr>), case-insensitive like nginx and anchored at the start
// for every alternative, so "^a|b" cannot match "/xb". Expressions whose
// compiled program exceeds MaxRegexInstructions or MaxRegexProgramBytes
// are refused.
func CompilePathRegex(expr string) (*regexp.Regexp, error) {
	return compileBounded(expr, pathRegex)
}

// CompileValueRegex compiles a header or cookie value regex, which must
// match the whole value.
func CompileValueRegex(expr string) (*regexp.Regexp, error) {
	return compileBounded(expr, valueRegex)
}

// CompileSubjectRegex compiles client_auth.subject_regex: searched for in
// the subject DN, unanchored and case-sensitive as nginx's ~.
func CompileSubjectRegex(expr string) (*regexp.Regexp, error) {
	return compileBounded(expr, searchRegex)
}

// CompileRewriteRegex compiles the From of a TextRewrite with Regex:
// searched for in the header value, unanchored and case-sensitive as
// nginx's ~.
func CompileRewriteRegex(expr string) (*regexp.Regexp, error) {
	return compileBounded(expr, searchRegex)
}

// regexKind is how an expression is wrapped: as a path or as a value regex.
type regexKind int

const (
	pathRegex regexKind = iota
	valueRegex
	searchRegex
)

// flags are the parse flags: a path regex is case-insensitive, as nginx's ~*;
// the others are case-sensitive.
func (k regexKind) flags() syntax.Flags {
	if k == pathRegex {
		return syntax.Perl | syntax.FoldCase
	}
	return syntax.Perl
}

// wrapped anchors the parsed expression: a path regex at the start, a value
// regex at both ends, a search regex nowhere.
func (k regexKind) wrapped(tree *syntax.Regexp) string {
	switch k {
	case valueRegex:
		return "^(?:" + tree.String() + ")$"
	case searchRegex:
		return "(?:" + tree.String() + ")"
	}
	return "^(?:" + tree.String() + ")"
}

// program is the size of a compiled regex.
type program struct {
	instructions int
	bytes        int
}

// compileBounded parses expr on its own, so that nothing in it can close
// the group it is wrapped in ("/a)|(?:/b" must not escape the anchor), then
// compiles the parsed expression with the kind's anchors.
func compileBounded(expr string, kind regexKind) (*regexp.Regexp, error) {
	wrapped, size, err := wrap(expr, kind)
	if err != nil {
		return nil, err
	}
	if size.instructions > MaxRegexInstructions {
		return nil, fmt.Errorf("compiles to %d instructions, more than the limit of %d", size.instructions, MaxRegexInstructions)
	}
	if size.bytes > MaxRegexProgramBytes {
		return nil, fmt.Errorf("compiles to %d bytes, more than the limit of %d", size.bytes, MaxRegexProgramBytes)
	}
	return regexp.Compile(wrapped)
}

// wrap returns the wrapped expression and the size of its program.
func wrap(expr string, kind regexKind) (string, program, error) {
	if len(expr) > MaxValueLength {
		return "", program{}, fmt.Errorf("must be at most %d bytes", MaxValueLength)
	}
	tree, err := syntax.Parse(expr, kind.flags())
	if err != nil {
		return "", program{}, fmt.Errorf("invalid regular expression: %v", syntaxReason(err))
	}
	wrapped := kind.wrapped(tree)
	size, err := programSize(wrapped)
	if err != nil {
		return "", program{}, fmt.Errorf("invalid regular expression: %v", syntaxReason(err))
	}
	return wrapped, size, nil
}

// programSize compiles expr as regexp.Compile does and measures the
// program: its instructions and an estimate of its memory.
func programSize(expr string) (program, error) {
	re, err := syntax.Parse(expr, syntax.Perl)
	if err != nil {
		return program{}, err
	}
	prog, err := syntax.Compile(re.Simplify())
	if err != nil {
		return program{}, err
	}
	size := program{instructions: len(prog.Inst), bytes: len(prog.Inst) * int(unsafe.Sizeof(syntax.Inst{}))}
	for i := range prog.Inst {
		size.bytes += len(prog.Inst[i].Rune) * int(unsafe.Sizeof(rune(0)))
	}
	return size, nil
}

func syntaxReason(err error) string {
	if se, ok := err.(*syntax.Error); ok {
		return fmt.Sprintf("%s in %q", se.Code, se.Expr)
	}
	return err.Error()
}

// RegexSize is the size of compiled regexes: their instructions and an
// estimate of their memory in bytes.
type RegexSize struct {
	Instructions, Bytes int
}

// RegexSize returns the size of the programs of the match's regexes (path,
// headers and cookies) together: Instructions is what a request that tries
// the route may run per byte it reads, Bytes what the regexes take of the
// file's MaxRegexBudgetBytes. Expressions that do not compile count
// nothing (validation reports them).
func (m *Match) RegexSize() RegexSize {
	var size RegexSize
	add := func(expr string, kind regexKind) {
		if expr != "" {
			_, p, _ := wrap(expr, kind)
			size.Instructions += p.instructions
			size.Bytes += p.bytes
		}
	}
	add(m.Path.Regex, pathRegex)
	for _, h := range m.Headers {
		add(h.Regex, valueRegex)
	}
	for _, c := range m.Cookies {
		add(c.Regex, valueRegex)
	}
	return size
}

// RegexInstructionBudget returns how many regex instructions the routes of
// one application may hold together under these limits: RegexWorkBudget
// over max_regex_input_bytes.
func (lim *Limits) RegexInstructionBudget() int {
	return int(RegexWorkBudget / lim.MaxRegexInputBytes.Or(DefaultMaxRegexInputBytes))
}

// regexBudget sums the program sizes of the regexes of a file (paths,
// headers and cookies): their memory in the whole file, and their
// instructions in the application being validated.
type regexBudget struct {
	used int
	// application counts the instructions of the current application's
	// regexes, up to perApplication (Limits.RegexInstructionBudget).
	application, perApplication int
}

// spend adds the program of a regex of the given kind.
func (b *regexBudget) spend(expr string, kind regexKind) error {
	_, size, _ := wrap(expr, kind)
	b.used += size.bytes
	b.application += size.instructions
	if b.used > MaxRegexBudgetBytes {
		return fmt.Errorf("the regexes of the configuration compile to more than %d bytes together", MaxRegexBudgetBytes)
	}
	return nil
}
