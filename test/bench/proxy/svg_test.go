package main

import (
	"encoding/xml"
	"errors"
	"io"
	"math"
	"strings"
	"testing"
)

// svgElements parses an SVG document and counts its elements by name,
// collecting its text; any XML error fails the test.
func svgElements(t *testing.T, doc string) (map[string]int, string) {
	t.Helper()
	dec := xml.NewDecoder(strings.NewReader(doc))
	counts := map[string]int{}
	var text strings.Builder
	root := ""
	for {
		tok, err := dec.Token()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			t.Fatalf("not well-formed XML: %v\n%s", err, doc)
		}
		switch tok := tok.(type) {
		case xml.StartElement:
			if root == "" {
				root = tok.Name.Space + " " + tok.Name.Local
			}
			counts[tok.Name.Local]++
		case xml.CharData:
			text.Write(tok)
		}
	}
	if root != "http://www.w3.org/2000/svg svg" {
		t.Fatalf("root element %q, want svg in the SVG namespace", root)
	}
	return counts, text.String()
}

func TestChartWrite(t *testing.T) {
	c := chart{
		title:  `CPU <per> request & "more"`,
		unit:   "µs per request",
		groups: []string{"HTTP/1.1 1 KiB", "a <b> & c, a name long enough to wrap"},
		series: []string{"ramjetd", "nginx", "HAProxy"},
		values: [][]float64{{100.7, 34.4, 40.5}, {208, math.NaN(), 121}},
	}
	var b strings.Builder
	if err := c.write(&b); err != nil {
		t.Fatal(err)
	}
	counts, text := svgElements(t, b.String())
	// The background, 5 bars (one value is NaN) and 3 legend keys.
	if got, want := counts["rect"], 1+5+3; got != want {
		t.Errorf("%d rect elements, want %d", got, want)
	}
	for _, want := range []string{`CPU <per> request & "more"`, "a <b> & c,", "101", "34.4", "208", "HAProxy", "µs per request"} {
		if !strings.Contains(text, want) {
			t.Errorf("text %q does not hold %q", text, want)
		}
	}
	if strings.Contains(b.String(), "NaN") {
		t.Error("the chart holds NaN")
	}
}

func TestChartWriteEmpty(t *testing.T) {
	var b strings.Builder
	if err := (chart{title: "nothing"}).write(&b); err != nil {
		t.Fatal(err)
	}
	counts, _ := svgElements(t, b.String())
	if counts["rect"] != 1 {
		t.Errorf("%d rect elements, want the background only", counts["rect"])
	}
}

func TestNiceCeiling(t *testing.T) {
	for _, tc := range []struct{ v, want float64 }{
		{0, 1}, {838, 1000}, {143, 200}, {220, 250}, {30, 50}, {1000, 1000}, {0.7, 1},
	} {
		if got := niceCeiling(tc.v); got != tc.want {
			t.Errorf("niceCeiling(%v) = %v, want %v", tc.v, got, tc.want)
		}
	}
}
