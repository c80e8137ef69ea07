package config

import (
	"fmt"
	"regexp"
	"regexp/syntax"
	"unsafe"
)

// Regex size limits. RE2 runs in linear time, but a large program costs
// memory in every replica, so one expression and the whole file are bounded.
const (
	MaxRegexProgramBytes = 1 << 20
	MaxRegexBudgetBytes  = 64 << 20
)

// CompilePathRegex compiles a route's path regex the way the router matches
// it: (?i)^(?:<expr>), case-insensitive like nginx and anchored at the start
// for every alternative, so "^a|b" cannot match "/xb". Expressions whose
// compiled program exceeds MaxRegexProgramBytes are refused.
func CompilePathRegex(expr string) (*regexp.Regexp, error) {
	return compileBounded(expr, syntax.Perl|syntax.FoldCase, "^(?:", ")")
}

// CompileValueRegex compiles a header or cookie value regex, which must
// match the whole value.
func CompileValueRegex(expr string) (*regexp.Regexp, error) {
	return compileBounded(expr, syntax.Perl, "^(?:", ")$")
}

// compileBounded parses expr on its own, so that nothing in it can close
// the group it is wrapped in ("/a)|(?:/b" must not escape the anchor), then
// compiles the parsed expression between prefix and suffix.
func compileBounded(expr string, flags syntax.Flags, prefix, suffix string) (*regexp.Regexp, error) {
	wrapped, size, err := wrap(expr, flags, prefix, suffix)
	if err != nil {
		return nil, err
	}
	if size > MaxRegexProgramBytes {
		return nil, fmt.Errorf("compiles to %d bytes, more than the limit of %d", size, MaxRegexProgramBytes)
	}
	return regexp.Compile(wrapped)
}

// wrap returns the wrapped expression and the size of its program.
func wrap(expr string, flags syntax.Flags, prefix, suffix string) (string, int, error) {
	if len(expr) > MaxValueLength {
		return "", 0, fmt.Errorf("must be at most %d bytes", MaxValueLength)
	}
	tree, err := syntax.Parse(expr, flags)
	if err != nil {
		return "", 0, fmt.Errorf("invalid regular expression: %v", syntaxReason(err))
	}
	wrapped := prefix + tree.String() + suffix
	size, err := programBytes(wrapped)
	if err != nil {
		return "", 0, fmt.Errorf("invalid regular expression: %v", syntaxReason(err))
	}
	return wrapped, size, nil
}

// programBytes estimates the memory of the compiled program of expr.
func programBytes(expr string) (int, error) {
	re, err := syntax.Parse(expr, syntax.Perl)
	if err != nil {
		return 0, err
	}
	prog, err := syntax.Compile(re.Simplify())
	if err != nil {
		return 0, err
	}
	size := len(prog.Inst) * int(unsafe.Sizeof(syntax.Inst{}))
	for i := range prog.Inst {
		size += len(prog.Inst[i].Rune) * int(unsafe.Sizeof(rune(0)))
	}
	return size, nil
}

func syntaxReason(err error) string {
	if se, ok := err.(*syntax.Error); ok {
		return fmt.Sprintf("%s in %q", se.Code, se.Expr)
	}
	return err.Error()
}

// regexBudget sums the program sizes of all the regexes of a file: paths,
// headers and cookies.
type regexBudget struct{ used int }

// spend adds the program of a path (value false) or value (true) regex.
func (b *regexBudget) spend(expr string, value bool) error {
	flags, prefix, suffix := syntax.Perl|syntax.FoldCase, "^(?:", ")"
	if value {
		flags, suffix = syntax.Perl, ")$"
	}
	_, size, _ := wrap(expr, flags, prefix, suffix)
	b.used += size
	if b.used > MaxRegexBudgetBytes {
		return fmt.Errorf("the regexes of the configuration compile to more than %d bytes together", MaxRegexBudgetBytes)
	}
	return nil
}
