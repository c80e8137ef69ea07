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
	return compileBounded(expr, "(?i)^(?:"+expr+")")
}

// CompileValueRegex compiles a header or cookie value regex, which must
// match the whole value.
func CompileValueRegex(expr string) (*regexp.Regexp, error) {
	return compileBounded(expr, "^(?:"+expr+")$")
}

func compileBounded(expr, wrapped string) (*regexp.Regexp, error) {
	if len(expr) > MaxValueLength {
		return nil, fmt.Errorf("must be at most %d bytes", MaxValueLength)
	}
	size, err := programBytes(wrapped)
	if err != nil {
		return nil, fmt.Errorf("invalid regular expression: %v", syntaxReason(err))
	}
	if size > MaxRegexProgramBytes {
		return nil, fmt.Errorf("compiles to %d bytes, more than the limit of %d", size, MaxRegexProgramBytes)
	}
	return regexp.Compile(wrapped)
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

// regexBudget sums the program sizes of all path regexes of a file.
type regexBudget struct{ used int }

func (b *regexBudget) spend(expr string) error {
	size, _ := programBytes("(?i)^(?:" + expr + ")")
	b.used += size
	if b.used > MaxRegexBudgetBytes {
		return fmt.Errorf("the path regexes of the configuration compile to more than %d bytes together", MaxRegexBudgetBytes)
	}
	return nil
}
