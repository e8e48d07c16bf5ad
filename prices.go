package loopbreaker

import (
	"math"
	"strings"
)

// Price is what a model costs, in US dollars per million tokens.
type Price struct {
	// Input prices an uncached prompt token; Output a completion token,
	// thinking included.
	Input  float64
	Output float64
	// CacheRead and CacheWrite price a prompt token read from, or written
	// to, the prompt cache; zero: the Input price.
	CacheRead  float64
	CacheWrite float64
	// Long prices every token of a request whose prompt is above LongAbove
	// tokens (a long-context tier); nil: none.
	LongAbove int
	Long      *Price
}

// Cost returns what u's tokens cost at p, in US dollars; u.CostUSD and
// u.Model are not read.
func (p Price) Cost(u Usage) float64 {
	in := max(u.InputTokens, 0)
	if p.Long != nil && p.LongAbove > 0 && in > p.LongAbove {
		p = *p.Long
	}
	read := min(max(u.CacheReadTokens, 0), in)
	write := min(max(u.CacheWriteTokens, 0), in-read)
	orInput := func(rate float64) float64 {
		if rate == 0 {
			return p.Input
		}
		return rate
	}
	cost := float64(in-read-write)*p.Input +
		float64(read)*orInput(p.CacheRead) +
		float64(write)*orInput(p.CacheWrite) +
		float64(max(u.OutputTokens, 0))*p.Output
	return math.Min(math.Max(cost/1e6, 0), math.MaxFloat64)
}

// Cost returns what u's tokens cost at the price of u.Model ([Prices.Lookup]);
// false when there is none.
func (p Prices) Cost(u Usage) (float64, bool) {
	if u.Model == "" {
		return 0, false
	}
	price, ok := p.Lookup(u.Model)
	if !ok {
		return 0, false
	}
	return price.Cost(u), true
}

// Prices is a price table, by the model's name as its provider's API gives
// it (claude-sonnet-4-5, gpt-5, gemini-2.5-pro).
type Prices map[string]Price

// PricesDate is the day the [DefaultPrices] were read from the providers'
// price pages.
const PricesDate = "2026-11-22"

// DefaultPrices returns the built-in table of Anthropic, OpenAI and Google
// Gemini models at their standard rates as of [PricesDate], a new map the
// caller may change.
func DefaultPrices() Prices {
	p := Prices{}
	// Anthropic: input, output, 5-minute cache write, cache read.
	claude := func(in, out, write, read float64, names ...string) {
		for _, n := range names {
			p[n] = Price{Input: in, Output: out, CacheWrite: write, CacheRead: read}
		}
	}
	claude(8, 40, 10, 0.20, "claude-fable-5-2")
	claude(10, 50, 12.50, 0.25, "claude-fable-5-1", "claude-mythos-5-1")
	claude(10, 50, 12.50, 1, "claude-fable-5", "claude-mythos-5")
	claude(4, 20, 5, 0.20, "claude-opus-5-5")
	claude(5, 25, 6.25, 0.50, "claude-opus-5", "claude-opus-4-8", "claude-opus-4-7", "claude-opus-4-6", "claude-opus-4-5")
	claude(15, 75, 18.75, 1.50, "claude-opus-4-1", "claude-opus-4", "claude-opus-4-0", "claude-3-opus")
	claude(2, 10, 2.50, 0.10, "claude-sonnet-5-5")
	claude(2, 10, 2.50, 0.20, "claude-sonnet-5")
	claude(3, 15, 3.75, 0.30, "claude-sonnet-4-6", "claude-sonnet-4-5", "claude-sonnet-4", "claude-sonnet-4-0", "claude-3-7-sonnet")
	claude(1, 5, 1.25, 0.10, "claude-haiku-4-5")
	claude(0.80, 4, 1, 0.08, "claude-3-5-haiku")
	claude(0.25, 1.25, 0.30, 0.03, "claude-3-haiku")
	p["claude-haiku-5-5"] = Price{Input: 0.10, Output: 0.50, CacheWrite: 0.125, CacheRead: 0.01,
		LongAbove: 100_000, Long: &Price{Input: 0.50, Output: 2.50, CacheWrite: 0.625, CacheRead: 0.05}}

	// OpenAI: input, cached input, output (and, from GPT-5.6 on, a cache
	// write at 1.25 times the input).
	openai := func(in, cached, out float64, names ...string) {
		for _, n := range names {
			p[n] = Price{Input: in, Output: out, CacheRead: cached}
		}
	}
	// long is OpenAI's tier above 272,000 prompt tokens: input and cache
	// at twice, output at 1.5 times the price, for the whole request.
	long := func(name string) {
		pr := p[name]
		pr.LongAbove = 272_000
		pr.Long = &Price{Input: 2 * pr.Input, Output: 1.5 * pr.Output, CacheRead: 2 * pr.CacheRead, CacheWrite: 2 * pr.CacheWrite}
		p[name] = pr
	}
	for _, m := range []struct {
		name                   string
		in, cached, write, out float64
	}{
		{"gpt-6.2-astra", 8, 0.40, 10, 40},
		{"gpt-6.2-sol", 2, 0.10, 2.50, 10},
		{"gpt-6.1-terra", 1, 0.05, 1.25, 5},
		{"gpt-6.1-sol", 2, 0.10, 2.50, 10},
		{"gpt-6-astra", 10, 1, 12.50, 50},
	} {
		p[m.name] = Price{Input: m.in, Output: m.out, CacheRead: m.cached, CacheWrite: m.write}
		long(m.name)
	}
	openai(5, 0.50, 30, "gpt-5.5")
	openai(2.50, 0.25, 15, "gpt-5.4")
	long("gpt-5.5")
	long("gpt-5.4")
	openai(30, 30, 180, "gpt-5.5-pro", "gpt-5.4-pro")
	openai(0.75, 0.075, 4.50, "gpt-5.4-mini")
	openai(0.20, 0.02, 1.25, "gpt-5.4-nano")
	openai(1.75, 0.175, 14, "gpt-5.3-codex", "gpt-5.2", "gpt-5.2-chat-latest", "gpt-5.2-codex")
	openai(21, 21, 168, "gpt-5.2-pro")
	openai(1.25, 0.125, 10, "gpt-5.1", "gpt-5.1-chat-latest", "gpt-5.1-codex", "gpt-5.1-codex-max",
		"gpt-5", "gpt-5-chat-latest", "gpt-5-codex")
	openai(0.25, 0.025, 2, "gpt-5.1-codex-mini", "gpt-5-mini")
	openai(0.05, 0.005, 0.40, "gpt-5-nano")
	openai(15, 15, 120, "gpt-5-pro")
	openai(1.50, 0.375, 6, "codex-mini-latest")
	openai(2, 0.50, 8, "gpt-4.1", "o3")
	openai(0.40, 0.10, 1.60, "gpt-4.1-mini")
	openai(0.10, 0.025, 0.40, "gpt-4.1-nano")
	openai(2.50, 1.25, 10, "gpt-4o")
	openai(5, 5, 15, "gpt-4o-2024-05-13")
	openai(0.15, 0.075, 0.60, "gpt-4o-mini")
	openai(20, 20, 80, "o3-pro")
	openai(1.10, 0.55, 4.40, "o3-mini", "o1-mini")
	openai(1.10, 0.275, 4.40, "o4-mini")
	openai(15, 7.50, 60, "o1")
	openai(150, 150, 600, "o1-pro")

	// Google Gemini (the paid tier): input, output (thinking included),
	// context-caching read.
	gemini := func(in, out, read float64, names ...string) {
		for _, n := range names {
			p[n] = Price{Input: in, Output: out, CacheRead: read}
		}
	}
	gemini(1.50, 7.50, 0.15, "gemini-3.8-flash", "gemini-3.7-flash", "gemini-3.6-flash")
	gemini(1.50, 9, 0, "gemini-3.5-flash")
	gemini(0.30, 2.50, 0.03, "gemini-3.5-flash-lite", "gemini-2.5-flash")
	gemini(0.25, 1.50, 0.025, "gemini-3.1-flash-lite")
	gemini(0.50, 3, 0.05, "gemini-3-flash-preview")
	gemini(0.10, 0.40, 0.01, "gemini-2.5-flash-lite")
	gemini(0.10, 0.40, 0.025, "gemini-2.0-flash")
	gemini(0.075, 0.30, 0, "gemini-2.0-flash-lite")
	p["gemini-3.1-pro-preview"] = Price{Input: 2, Output: 12, CacheRead: 0.20,
		LongAbove: 200_000, Long: &Price{Input: 4, Output: 18, CacheRead: 0.40}}
	p["gemini-2.5-pro"] = Price{Input: 1.25, Output: 10, CacheRead: 0.125,
		LongAbove: 200_000, Long: &Price{Input: 2.50, Output: 15, CacheRead: 0.25}}
	return p
}

// Lookup returns the price of model, by its name as given or as providers
// vary it (case, a router's or cloud's prefix, a date or version suffix); a
// name that only begins like a known one has no price.
func (p Prices) Lookup(model string) (Price, bool) {
	if pr, ok := p[model]; ok {
		return pr, true
	}
	name := strings.ToLower(strings.TrimSpace(model))
	if i := strings.LastIndexByte(name, '/'); i >= 0 {
		name = name[i+1:]
	}
	for _, vendor := range []string{"anthropic.", "openai.", "google."} {
		if i := strings.LastIndex(name, vendor); i >= 0 {
			name = name[i+len(vendor):]
		}
	}
	if strings.HasPrefix(name, "claude-") {
		name = claudeDashes(name)
	}
	for {
		if pr, ok := p[name]; ok {
			return pr, true
		}
		shorter := withoutVersion(name)
		if shorter == name {
			return Price{}, false
		}
		name = shorter
	}
}

// claudeDashes writes a dot between two digits as a dash, as Anthropic's
// API names its models: claude-sonnet-4.5 is claude-sonnet-4-5.
func claudeDashes(name string) string {
	b := []byte(name)
	for i := 1; i+1 < len(b); i++ {
		if b[i] == '.' && isDigit(b[i-1]) && isDigit(b[i+1]) {
			b[i] = '-'
		}
	}
	return string(b)
}

// withoutVersion returns name without its last version suffix, or name
// when it has none.
func withoutVersion(name string) string {
	if i := strings.LastIndexByte(name, '@'); i > 0 {
		return name[:i]
	}
	if strings.HasSuffix(name, "[1m]") {
		return strings.TrimSuffix(name, "[1m]")
	}
	if strings.HasSuffix(name, "-latest") {
		return strings.TrimSuffix(name, "-latest")
	}
	i := strings.LastIndexByte(name, '-')
	if i <= 0 {
		return name
	}
	last := name[i+1:]
	switch {
	case len(last) == 8 && allDigits(last), // -20250929
		len(last) == 3 && allDigits(last): // -001
		return name[:i]
	case strings.HasPrefix(last, "v") && len(last) > 1 && isDigit(last[1]): // -v1:0
		return name[:i]
	}
	// -2025-04-14, -preview-09-2025
	if parts := strings.Split(name, "-"); len(parts) > 3 {
		t := parts[len(parts)-3:]
		if (len(t[0]) == 4 && allDigits(t[0]) || t[0] == "preview") && allDigits(t[1]) && allDigits(t[2]) {
			return strings.Join(parts[:len(parts)-3], "-")
		}
	}
	return name
}

func allDigits(s string) bool {
	for i := 0; i < len(s); i++ {
		if !isDigit(s[i]) {
			return false
		}
	}
	return s != ""
}

func isDigit(c byte) bool { return '0' <= c && c <= '9' }
