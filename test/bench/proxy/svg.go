package main

import (
	"bytes"
	"encoding/xml"
	"fmt"
	"io"
	"math"
	"strings"
)

// chart is a grouped bar chart: one group per cell, one bar per series
// (contender) in each.
type chart struct {
	title  string
	unit   string      // of the values, on the axis
	groups []string    // below each group
	series []string    // in the legend
	values [][]float64 // [group][series]; NaN draws no bar
}

// barColours are the colours of the series, in order (colour-blind safe).
var barColours = []string{"#0072b2", "#e69f00", "#009e73", "#cc79a7"}

// Layout of the chart, in SVG user units.
const (
	chartWidth  = 960
	chartHeight = 440
	plotLeft    = 70
	plotTop     = 50
	plotBottom  = 360 // the x axis
	plotRight   = chartWidth - 20
)

// write draws the chart as a standalone SVG document. Text is escaped;
// numbers are formatted by the program.
func (c chart) write(w io.Writer) error {
	top := niceCeiling(c.max())
	var b strings.Builder
	p := func(format string, args ...any) { fmt.Fprintf(&b, format, args...) }
	p(`<svg xmlns="http://www.w3.org/2000/svg" width="%d" height="%d" viewBox="0 0 %d %d" font-family="sans-serif" font-size="12">`+"\n",
		chartWidth, chartHeight, chartWidth, chartHeight)
	p(`<rect width="%d" height="%d" fill="#ffffff"/>`+"\n", chartWidth, chartHeight)
	p(`<text x="%d" y="24" font-size="16" font-weight="bold">%s</text>`+"\n", plotLeft, esc(c.title))
	for i := 0; i <= 5; i++ {
		v := top * float64(i) / 5
		y := c.y(v, top)
		p(`<line x1="%d" y1="%.1f" x2="%d" y2="%.1f" stroke="#dddddd"/>`+"\n", plotLeft, y, plotRight, y)
		p(`<text x="%d" y="%.1f" text-anchor="end">%s</text>`+"\n", plotLeft-6, y+4, esc(number(v)))
	}
	p(`<text transform="translate(16 %d) rotate(-90)" text-anchor="middle">%s</text>`+"\n", (plotTop+plotBottom)/2, esc(c.unit))
	groupWidth := float64(plotRight-plotLeft) / float64(max(len(c.groups), 1))
	barWidth := groupWidth * 0.8 / float64(max(len(c.series), 1))
	for g, name := range c.groups {
		x0 := plotLeft + groupWidth*float64(g) + groupWidth*0.1
		for s, v := range c.values[g] {
			if math.IsNaN(v) {
				continue
			}
			x, y := x0+barWidth*float64(s), c.y(v, top)
			p(`<rect x="%.1f" y="%.1f" width="%.1f" height="%.1f" fill="%s"/>`+"\n",
				x, y, barWidth-2, plotBottom-y, barColours[s%len(barColours)])
			p(`<text x="%.1f" y="%.1f" text-anchor="middle" font-size="10">%s</text>`+"\n", x+barWidth/2-1, y-3, esc(number(v)))
		}
		for i, line := range wrap(name, 22) {
			p(`<text x="%.1f" y="%d" text-anchor="middle">%s</text>`+"\n", x0+groupWidth*0.4, plotBottom+16+14*i, esc(line))
		}
	}
	p(`<line x1="%d" y1="%d" x2="%d" y2="%d" stroke="#333333"/>`+"\n", plotLeft, plotBottom, plotRight, plotBottom)
	for s, name := range c.series {
		x := plotRight - 110*(len(c.series)-s)
		p(`<rect x="%d" y="12" width="12" height="12" fill="%s"/>`+"\n", x, barColours[s%len(barColours)])
		p(`<text x="%d" y="22">%s</text>`+"\n", x+16, esc(name))
	}
	p("</svg>\n")
	_, err := io.WriteString(w, b.String())
	return err
}

// max is the largest value, 0 when there is none.
func (c chart) max() float64 {
	m := 0.0
	for _, vs := range c.values {
		for _, v := range vs {
			if !math.IsNaN(v) && v > m {
				m = v
			}
		}
	}
	return m
}

// y is the vertical position of v on an axis from 0 to top.
func (c chart) y(v, top float64) float64 {
	return plotBottom - v/top*float64(plotBottom-plotTop)
}

// niceCeiling is the smallest of 1, 2, 2.5 or 5 times a power of ten that
// is at least v (1 for v <= 0), the top of the axis.
func niceCeiling(v float64) float64 {
	if v <= 0 {
		return 1
	}
	p := math.Pow(10, math.Floor(math.Log10(v)))
	for _, m := range []float64{1, 2, 2.5, 5, 10} {
		if m*p >= v {
			return m * p
		}
	}
	return 10 * p
}

// wrap splits s into lines of at most width bytes at spaces (a longer
// word stays whole).
func wrap(s string, width int) []string {
	var lines []string
	line := ""
	for _, word := range strings.Fields(s) {
		if line != "" && len(line)+1+len(word) > width {
			lines = append(lines, line)
			line = ""
		}
		if line != "" {
			line += " "
		}
		line += word
	}
	return append(lines, line)
}

// esc escapes s for XML text and attribute values.
func esc(s string) string {
	var b bytes.Buffer
	xml.EscapeText(&b, []byte(s))
	return b.String()
}
