package limits

import (
	"net/http"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"time"
)

// MaxAhead is how far ahead a reset may lie and still be believed. No
// provider window is longer than a month (Claude's weekly limit, Codex's
// weekly limit, an API spend cap that lifts on the first of the month); a
// time further off is a misreading, and counts as a reset that was named
// but cannot be used.
const MaxAhead = 35 * 24 * time.Hour

// when is a reset time read from text. ok says the text named a time and
// the time is usable: not before now and at most MaxAhead after it. A
// named time that is not usable (already past, too far off, in a zone this
// machine does not know) leaves ok false and named true.
type when struct {
	at    time.Time
	named bool
	ok    bool
}

// usable checks t against now and MaxAhead.
func usable(t, now time.Time) when {
	if t.Before(now) || t.Sub(now) > MaxAhead {
		return when{named: true}
	}
	return when{at: t, named: true, ok: true}
}

// after is now plus d, when d is a usable wait.
func after(now time.Time, d time.Duration) when {
	if d < 0 {
		return when{named: true}
	}
	return usable(now.Add(d), now)
}

// unixTime reads whole seconds since 1970 ("1766502000").
func unixTime(s string, now time.Time) when {
	n, err := strconv.ParseInt(s, 10, 64)
	if err != nil {
		return when{named: true}
	}
	return unixAt(float64(n), now)
}

// unixAt is the time sec seconds after 1970, shown in now's location.
func unixAt(sec float64, now time.Time) when {
	if !(sec > 0 && sec < 1<<40) {
		return when{named: true}
	}
	return usable(time.Unix(int64(sec), 0).In(now.Location()), now)
}

// findReset reads when a limit lifts from the words after its message: the
// first reset clause in s that names a time. The clauses, as tools and APIs
// write them:
//
//	resets 5pm (Europe/Vilnius)            Claude Code
//	resets May 5 at 9pm (America/New_York) Claude Code, a date
//	Your limit will reset at 7pm (Asia/Tokyo)
//	Limits will reset at 9:30 AM           claude.ai
//	resets in 2 hours
//	try again in 5 days 22 hours 11 minutes  Codex, Copilot
//	try again at Jul 5th, 2026 8:19 PM     Codex
//	Please try again in 20s                OpenAI's rate_limit_exceeded message
//	Please retry after 86400 seconds       Azure OpenAI
//	Please retry in 11.665902715s.         Gemini API
//	Your quota will reset after 8h44m7s.   Gemini Code Assist
//	Please wait 17 seconds before trying again  Copilot
//	请 117 秒后重试                          a proxy, in Chinese (retry in 117 seconds)
//	wait for your limit to reset on 2026 4 23 22:48  Copilot, a date in numbers
//	regain access on 2025-06-01 at 00:00 UTC  Anthropic API spend limit
//	usage limit reached|1766502000         Claude Code, a Unix time
//	"resets_at":1777936568                 Codex's usage_limit_reached body
//	"resets_in_seconds":13872              the same
//	"retryDelay": "37s"                    Gemini's RetryInfo
//	· Retrying in 4 seconds… (attempt 4/10)  Claude Code retrying a throttle
//
// A retry ("Retrying in 4 seconds") is the client's own, not the
// provider's word on when the limit lifts: it stands for the reset of a
// throttle only, when retries is true. A clause whose words are not a time
// ("reset (every 5h and every week.)", "wait a moment") is passed over;
// one that names a time that cannot be used stops the search, so that a
// later clause does not stand in for it.
func findReset(s string, now time.Time, retries bool) when {
	for i := 0; i < len(s); i++ {
		if !clauseStarts[s[i]] {
			continue
		}
		if w := clauseAt(s, i, now, retries); w.named {
			return w
		}
	}
	return when{}
}

// clauseStarts are the bytes a reset clause begins with.
var clauseStarts = func() (t [256]bool) {
	for _, c := range "rtwcaRTWCA\"'\\|" {
		t[c] = true
	}
	t["将"[0]] = true // 将在 (at)
	t["请"[0]] = true // 请等待 (please wait)
	return t
}()

// clauseAt reads the reset clause that begins at s[i], if any (see
// findReset).
func clauseAt(s string, i int, now time.Time, retries bool) when {
	// A clause may follow an identifier's underscore: LangChain's
	// "_achat_with_retry in 2.0 seconds".
	if i == 0 || !isWordByte(s[i-1]) || s[i-1] == '_' {
		// "wait until 21 April 2025", "try again after August 20, 2026 at
		// 12:31": a date, where a duration does not follow.
		for _, until := range [][]string{{"wait", "until"}, {"try", "again", "after"}} {
			if end, ok := phraseAt(s, i, until...); ok {
				if w := durationAt(s[end:], now); w.named {
					return w
				}
				return parseWhen(s[end:], now)
			}
		}
		for _, in := range [][]string{{"resets", "in"}, {"reset", "in"}, {"try", "again", "in"}, {"resets", "after"}, {"reset", "after"}, {"retry", "in"}, {"retry", "after"}, {"wait"}, {"come", "back", "in"}, {"available", "in"}, {"请等待"}} {
			if end, ok := phraseAt(s, i, in...); ok {
				return durationAt(strings.TrimLeft(s[end:], "~*"), now) // "resets in ~5s", "wait **24 minutes**"
			}
		}
		if rest, ok := strings.CutPrefix(s[i:], "请"); ok {
			if w := cjkDurationAt(strings.TrimLeft(rest, " "), now); w.named {
				return w // "请 117 秒后重试" (retry in 117 seconds)
			}
		}
		for _, retry := range [][]string{{"retrying", "in"}, {"retrying", "after"}, {"waiting", "for"}, {"waiting"}} {
			if end, ok := phraseAt(s, i, retry...); ok && retries {
				return durationAt(s[end:], now)
			}
		}
		for _, at := range [][]string{{"resets", "at"}, {"reset", "at"}, {"resets", "on"}, {"reset", "on"}, {"regain", "access", "on"}, {"try", "again", "at"}, {"restablece", "el"}, {"将在"}, {"reset", "date", "utc"}, {"resets"}, {"reset"}} {
			if end, ok := phraseAt(s, i, at...); ok {
				return parseWhen(strings.TrimLeft(s[end:], `"`), now) // quota reset date utc: "2026-04-01T00:00:00.000Z"
			}
		}
	}
	if s[i] == '|' && i >= len("reached") && foldAt(s, i-len("reached"), "reached") {
		if unix := digitsAt(s[i+1:], 9, 11); unix != "" {
			return unixTime(unix, now)
		}
	}
	if end, ok := fieldAt(s, i, "resets_at"); ok {
		if unix := digitsAt(s[end:], 9, 11); unix != "" {
			return unixTime(unix, now)
		}
	}
	// Codex's resets_in_seconds; a proxy's cooldown, reset_seconds.
	for _, name := range []string{"resets_in_seconds", "reset_seconds"} {
		if end, ok := fieldAt(s, i, name); ok {
			return secondsAt(s[end:], now)
		}
	}
	if end, ok := fieldAt(s, i, "retryDelay"); ok {
		return durationAt(s[end:], now)
	}
	return when{}
}

// clockDurationAt reads a duration written as a clock, "0:01:25
// (HH:MM:SS)", from the start of s as a time after now; only where the
// text says it is one.
func clockDurationAt(s string, now time.Time) when {
	m := clockDurationRE().FindStringSubmatch(s)
	if m == nil {
		return when{}
	}
	h, _ := strconv.Atoi(m[1])
	mi, _ := strconv.Atoi(m[2])
	sec, _ := strconv.Atoi(m[3])
	return after(now, time.Duration(h)*time.Hour+time.Duration(mi)*time.Minute+time.Duration(sec)*time.Second)
}

var clockDurationRE = sync.OnceValue(func() *regexp.Regexp {
	return regexp.MustCompile(`^(\d{1,3}):(\d{2}):(\d{2})\s*\(HH:MM:SS\)`)
})

// cjkDurationAt reads a wait written in Chinese from the start of s, a
// count and its unit before 后 (after): "117 秒后", "5分钟后", "2 小时后".
func cjkDurationAt(s string, now time.Time) when {
	m := cjkDurationRE().FindStringSubmatch(s)
	if m == nil {
		return when{}
	}
	n, err := strconv.ParseFloat(m[1], 64)
	if err != nil {
		return when{}
	}
	unit := map[string]time.Duration{"秒": time.Second, "分钟": time.Minute, "分": time.Minute, "小时": time.Hour}[m[2]]
	if n*float64(unit) > float64(MaxAhead) {
		return when{named: true}
	}
	return after(now, time.Duration(n*float64(unit)))
}

var cjkDurationRE = sync.OnceValue(func() *regexp.Regexp {
	return regexp.MustCompile(`^(\d{1,9}(?:\.\d+)?)\s*(秒|分钟|分|小时)钟?后`)
})

// secondsAt reads a count of seconds from the start of s as a time after
// now.
func secondsAt(s string, now time.Time) when {
	if secs := digitsAt(s, 1, 10); secs != "" {
		n, _ := strconv.ParseInt(secs, 10, 64)
		if n > int64(MaxAhead/time.Second) {
			return when{named: true} // past MaxAhead, and past what a Duration holds
		}
		return after(now, time.Duration(n)*time.Second)
	}
	return when{}
}

// durationAt reads a duration from the start of s (see parseDuration, and
// clockDurationAt) as a time after now.
func durationAt(s string, now time.Time) when {
	if w := clockDurationAt(s, now); w.named {
		return w // Anthropic's computer-use demo: "Retry after 0:01:25 (HH:MM:SS)"
	}
	if d, ok := parseDuration(s); ok {
		return after(now, d)
	}
	return when{}
}

// phraseAt reports whether s holds the words at s[i:], in any case, each
// followed by white space, and where the white space after the last ends.
// A word may be broken once by a line break, as a terminal wraps a long
// line in the middle of a word ("try a\ngain at Jun 18th").
func phraseAt(s string, i int, words ...string) (int, bool) {
	for k, w := range words {
		end, ok := foldWrappedAt(s, i, w)
		if !ok {
			return 0, false
		}
		i = end
		if k == len(words)-1 && i < len(s) && s[i] == ':' {
			i++ // "Resets in: 30m0s"
			for i < len(s) && s[i] == '*' {
				i++ // in Markdown's bold: "available in:** **9 minutes**"
			}
		}
		if i == len(s) || !isSpace(s[i]) {
			return 0, false
		}
		i = skipSpace(s, i)
	}
	return i, true
}

// foldWrappedAt reports whether s holds word at s[i:], in any case, and
// where it ends there: as foldAt, but the word may be broken once after its
// first byte by a line break and the indent after it.
func foldWrappedAt(s string, i int, word string) (int, bool) {
	wrapped := false
	for j := 0; j < len(word); j++ {
		if i < len(s) && j > 0 && !wrapped && (s[i] == '\n' || s[i] == '\r') {
			wrapped = true
			for i < len(s) && isSpace(s[i]) {
				i++
			}
		}
		if i >= len(s) || lower(s[i]) != word[j] {
			return 0, false
		}
		i++
	}
	return i, true
}

// lower is the lower case of an ASCII letter, and any other byte itself.
func lower(c byte) byte {
	if 'A' <= c && c <= 'Z' {
		return c + 'a' - 'A'
	}
	return c
}

// fieldAt reports whether s holds the JSON field name at s[i:], quoted
// (straight, single or backslash-escaped quotes) or not, with its colon or
// equals sign and the opening quote of its value if any, and where they
// end: "resets_at":, \"retryDelay\": \", retryDelay:.
func fieldAt(s string, i int, name string) (int, bool) {
	i = skipQuote(s, i)
	if !strings.HasPrefix(s[i:], name) {
		return 0, false
	}
	i = skipSpace(s, skipQuote(s, i+len(name)))
	if i == len(s) || s[i] != ':' && s[i] != '=' {
		return 0, false
	}
	return skipQuote(s, skipSpace(s, i+1)), true
}

// skipQuote skips a quote at s[i], backslash-escaped or not.
func skipQuote(s string, i int) int {
	if i < len(s) && s[i] == '\\' {
		i++
	}
	if i < len(s) && (s[i] == '"' || s[i] == '\'') {
		i++
	}
	return i
}

// digitsAt returns the digits s begins with, if there are from min to max
// of them and no more; else "".
func digitsAt(s string, min, max int) string {
	n := 0
	for n < len(s) && isDigit(s[n]) {
		n++
	}
	if n < min || n > max {
		return ""
	}
	return s[:n]
}

func skipSpace(s string, i int) int {
	for i < len(s) && isSpace(s[i]) {
		i++
	}
	return i
}

func isSpace(c byte) bool    { return c == ' ' || c == '\t' || c == '\n' || c == '\r' }
func isWordByte(c byte) bool { return isLetter(c) || isDigit(c) || c == '_' }

// whenRE reads a clock time with an optional weekday or date before it and
// an optional time zone after it, the way Claude Code, claude.ai, Codex and
// the Anthropic API write them:
//
//	5pm  5:30pm  12:50am  9:30 AM  17:00
//	Mon 12:00am
//	May 5 at 9pm   Jul 31, 2am   Jul 5th, 2026 8:19 PM
//	2025-06-01 at 00:00 UTC   2026-05-15T15:00:00Z   2026-05-15T17:00:00+02:00
//	10 de jul. de 2026, 11:52             Codex in Portuguese
//	26 may 2026, 2:40 p.m.                Codex in Spanish
//	... (Europe/Vilnius)  (UTC)  (Etc/GMT+5)
//
// The clock needs minutes or am/pm: a bare "5" is no time.
var whenRE = sync.OnceValue(func() *regexp.Regexp {
	return regexp.MustCompile(`(?i)^` +
		`(?:(?P<wday>mon|tue|wed|thu|fri|sat|sun)[a-z]*\.?,?\s+)?` +
		`(?:(?P<month>jan|feb|mar|apr|may|jun|jul|aug|sep|oct|nov|dec)[a-z]*\.?\s+(?P<day>\d{1,2})(?:st|nd|rd|th)?(?:,?\s+(?P<year>\d{4}))?(?:\s*,\s*|\s+at\s+|\s+)` +
		`|(?P<iso>\d{4}-\d{2}-\d{2})(?:\s+at\s+|\s+|T)` +
		`|(?P<ymd>\d{4}\s\d{1,2}\s\d{1,2})\s+` +
		`|(?P<pday>\d{1,2})\s+(?:de\s+)?(?P<pmonth>[a-z]{3})[a-z]*\.?\s+(?:de\s+)?(?P<pyear>\d{4}),?\s+)?` +
		`(?P<hour>\d{1,2})(?::(?P<min>\d{2}))?(?::(?P<sec>\d{2})(?:\.\d{1,9})?)?(?:\s*(?P<ampm>[ap]\.?\s?m\b\.?))?` +
		`(?:\s*\((?P<zone>[A-Za-z][A-Za-z0-9_+\-/]{0,63})\)|\s*\b(?P<zword>UTC|GMT)(?P<zoff>[+-]\d{1,2}(?::?\d{2})?)?\b|(?P<zulu>Z)\b|\s*(?P<isooff>[+-]\d{2}:?\d{2})\b)?`)
})

var weekdays = map[string]time.Weekday{
	"sun": time.Sunday, "mon": time.Monday, "tue": time.Tuesday, "wed": time.Wednesday,
	"thu": time.Thursday, "fri": time.Friday, "sat": time.Saturday,
}

var months = map[string]time.Month{
	"jan": time.January, "feb": time.February, "mar": time.March, "apr": time.April,
	"may": time.May, "jun": time.June, "jul": time.July, "aug": time.August,
	"sep": time.September, "oct": time.October, "nov": time.November, "dec": time.December,
}

// mesesPT are the months as Portuguese and Spanish abbreviate them ("10
// de jul. de 2026", "26 may 2026"), as Codex writes a date, day first, in
// those locales; and English's, day first too.
var mesesPT = map[string]time.Month{
	"jan": time.January, "fev": time.February, "mar": time.March, "abr": time.April,
	"mai": time.May, "jun": time.June, "jul": time.July, "ago": time.August,
	"set": time.September, "out": time.October, "nov": time.November, "dez": time.December,
	"ene": time.January, "feb": time.February, "may": time.May, "sep": time.September,
	"oct": time.October, "dic": time.December,
	"apr": time.April, "aug": time.August, "dec": time.December,
}

// parseWhen reads a clock time from the start of s (see whenRE) and
// resolves it against now: in the zone the text names, or else in now's
// own location. A time of day alone is the next such time: today if it is
// still ahead, else tomorrow. A weekday is the next such day. A date
// without a year is the next such date. A date with a year is taken as it
// is, and is not usable once past. A date with its year and no time is
// the start of that day (dateOnly).
func parseWhen(s string, now time.Time) when {
	if w := parseClock(s, now); w.named {
		return w
	}
	return dateOnly(s, now)
}

// parseClock reads a clock time, with the date or weekday before it, as
// parseWhen does.
func parseClock(s string, now time.Time) when {
	m := whenRE().FindStringSubmatch(s)
	if m == nil {
		return when{}
	}
	g := func(name string) string { return m[whenRE().SubexpIndex(name)] }

	hour, _ := strconv.Atoi(g("hour"))
	minute := 0
	if g("min") != "" {
		minute, _ = strconv.Atoi(g("min"))
	}
	switch ampm := strings.ToLower(g("ampm")); {
	case ampm != "":
		if hour < 1 || hour > 12 {
			return when{}
		}
		hour %= 12
		if ampm[0] == 'p' {
			hour += 12
		}
	case g("min") == "" || hour > 23:
		return when{} // "5" alone, or "25:00"
	}
	second := 0
	if g("sec") != "" {
		second, _ = strconv.Atoi(g("sec"))
	}
	if minute > 59 || second > 59 {
		return when{}
	}

	loc := now.Location()
	switch {
	case g("zone") != "":
		l, err := time.LoadLocation(g("zone"))
		if err != nil {
			return when{named: true} // a zone this machine does not know
		}
		loc = l
	case g("zoff") != "":
		off, ok := zoneOffset(g("zoff"))
		if !ok {
			return when{named: true}
		}
		loc = time.FixedZone(g("zword")+g("zoff"), off)
	case g("zword") != "", g("zulu") != "":
		loc = time.UTC
	case g("isooff") != "":
		off, ok := zoneOffset(g("isooff"))
		if !ok {
			return when{named: true}
		}
		loc = time.FixedZone("", off)
	}
	local := now.In(loc)
	at := func(y int, mo time.Month, d int) time.Time {
		return time.Date(y, mo, d, hour, minute, second, 0, loc)
	}

	switch {
	case g("pday") != "":
		mo, known := mesesPT[strings.ToLower(g("pmonth"))]
		if !known {
			return when{named: true}
		}
		day, _ := strconv.Atoi(g("pday"))
		y, _ := strconv.Atoi(g("pyear"))
		t := at(y, mo, day)
		if t.Day() != day {
			return when{named: true}
		}
		return usable(t, now)
	case g("iso") != "":
		d, err := time.ParseInLocation("2006-01-02", g("iso"), loc)
		if err != nil {
			return when{named: true}
		}
		return usable(at(d.Year(), d.Month(), d.Day()), now)
	case g("ymd") != "":
		f := strings.Fields(g("ymd"))
		y, _ := strconv.Atoi(f[0])
		mo, _ := strconv.Atoi(f[1])
		day, _ := strconv.Atoi(f[2])
		t := at(y, time.Month(mo), day)
		if mo < 1 || mo > 12 || t.Day() != day {
			return when{named: true} // "2026 13 1", "2026 2 30"
		}
		return usable(t, now)
	case g("month") != "":
		mo := months[strings.ToLower(g("month"))]
		day, _ := strconv.Atoi(g("day"))
		y := local.Year()
		if g("year") != "" {
			y, _ = strconv.Atoi(g("year"))
		}
		t := at(y, mo, day)
		if t.Month() != mo || t.Day() != day {
			return when{named: true} // "Feb 30"
		}
		if g("year") == "" && t.Before(now) {
			t = at(y+1, mo, day)
		}
		return usable(t, now)
	case g("wday") != "":
		wd := weekdays[strings.ToLower(g("wday"))]
		ahead := (int(wd) - int(local.Weekday()) + 7) % 7
		t := at(local.Year(), local.Month(), local.Day()+ahead)
		if t.Before(now) {
			t = at(local.Year(), local.Month(), local.Day()+ahead+7)
		}
		return usable(t, now)
	}
	t := at(local.Year(), local.Month(), local.Day())
	if t.Before(now) {
		t = at(local.Year(), local.Month(), local.Day()+1)
	}
	return usable(t, now)
}

// dateRE reads a date with its year and no time, day first or month
// first: "21 April 2025" (Copilot's "wait until 21 April 2025 for your
// limit to reset"), "April 21, 2025".
var dateRE = sync.OnceValue(func() *regexp.Regexp {
	return regexp.MustCompile(`(?i)^(?:(?P<day>\d{1,2})\s+(?P<month>[a-z]{3,9})|(?P<month2>[a-z]{3,9})\s+(?P<day2>\d{1,2})(?:st|nd|rd|th)?,?)\s+(?P<year>\d{4})\b`)
})

// dateOnly reads a date without a time from the start of s (see dateRE)
// as the start of that day in now's location: a limit that lifts on a
// day lifts when the day begins.
func dateOnly(s string, now time.Time) when {
	m := dateRE().FindStringSubmatch(s)
	if m == nil {
		return when{}
	}
	g := func(name string) string { return m[dateRE().SubexpIndex(name)] }
	name, day := g("month"), g("day")
	if name == "" {
		name, day = g("month2"), g("day2")
	}
	mo, known := months[strings.ToLower(name[:3])]
	if !known || !isMonthName(name, mo) {
		return when{}
	}
	d, _ := strconv.Atoi(day)
	y, _ := strconv.Atoi(g("year"))
	t := time.Date(y, mo, d, 0, 0, 0, 0, now.Location())
	if t.Day() != d {
		return when{named: true} // "31 April 2025"
	}
	return usable(t, now)
}

// isMonthName reports whether name is mo's English name or its
// abbreviation ("Apr", "April"), not a word that begins like one
// ("Mayday").
func isMonthName(name string, mo time.Month) bool {
	full := strings.ToLower(mo.String())
	name = strings.ToLower(name)
	return name == full || name == full[:3] || mo == time.September && name == "sept"
}

// zoneOffset reads an offset from UTC as "GMT-3" and "UTC+05:30" write it
// after the zone's name, in seconds east of UTC.
func zoneOffset(s string) (int, bool) {
	sign := 1
	if s[0] == '-' {
		sign = -1
	}
	hm := strings.ReplaceAll(s[1:], ":", "")
	h, m := hm, ""
	if len(hm) > 2 {
		h, m = hm[:len(hm)-2], hm[len(hm)-2:]
	}
	hours, err := strconv.Atoi(h)
	if err != nil || hours > 14 {
		return 0, false
	}
	minutes := 0
	if m != "" {
		if minutes, err = strconv.Atoi(m); err != nil || minutes > 59 {
			return 0, false
		}
	}
	return sign * (hours*3600 + minutes*60), true
}

// units are the duration words parseDuration knows, singular and plural,
// with what one of each is worth.
var units = map[string]time.Duration{
	"ms": time.Millisecond, "millisecond": time.Millisecond, "milliseconds": time.Millisecond,
	"s": time.Second, "sec": time.Second, "secs": time.Second, "second": time.Second, "seconds": time.Second,
	"m": time.Minute, "min": time.Minute, "mins": time.Minute, "minute": time.Minute, "minutes": time.Minute,
	"h": time.Hour, "hr": time.Hour, "hrs": time.Hour, "hour": time.Hour, "hours": time.Hour,
	"d": 24 * time.Hour, "day": 24 * time.Hour, "days": 24 * time.Hour,
	"w": 7 * 24 * time.Hour, "week": 7 * 24 * time.Hour, "weeks": 7 * 24 * time.Hour,
}

// parseDuration reads a duration from the start of s, in words or in Go's
// own notation: "5 days 22 hours 11 minutes", "3 hours, 2 minutes",
// "2h 10m", "6m0s", "1.2s", "20ms", and a count in words: "one minute",
// "an hour". It reads number-unit pairs until one
// does not parse, and reports false when none did or the sum is beyond
// MaxAhead.
func parseDuration(s string) (time.Duration, bool) {
	var total float64
	pairs := 0
	for {
		s = strings.TrimLeft(s, " \t\r\n,")
		if rest, ok := cutPrefixFold(s, "and "); ok && pairs > 0 {
			s = strings.TrimLeft(rest, " \t\r\n")
		}
		n := 0
		for n < len(s) && n < 20 && (isDigit(s[n]) || s[n] == '.') {
			n++
		}
		var num float64
		if n > 0 {
			v, err := strconv.ParseFloat(s[:n], 64)
			if err != nil {
				break
			}
			num = v
		} else if num, n = numberWord(s); n == 0 { // "wait one minute", "in an hour"
			break
		}
		rest := strings.TrimLeft(s[n:], " \t\r\n")
		u := 0
		for u < len(rest) && u < 12 && isLetter(rest[u]) {
			u++
		}
		unit, ok := units[strings.ToLower(rest[:u])]
		if !ok {
			break
		}
		total += num * float64(unit)
		pairs++
		s = rest[u:]
	}
	if pairs == 0 || total > float64(MaxAhead) {
		return 0, false
	}
	return time.Duration(total), true
}

// numberWords are the counts a duration may be written with in words.
var numberWords = map[string]float64{"a": 1, "an": 1, "one": 1, "two": 2, "three": 3, "five": 5, "ten": 10}

// numberWord reads a count in words from the start of s ("one minute"),
// and how long it is; 0 when s does not start with one.
func numberWord(s string) (float64, int) {
	n := 0
	for n < len(s) && n < 6 && isLetter(s[n]) {
		n++
	}
	if n == len(s) || !isSpace(s[n]) {
		return 0, 0
	}
	v, ok := numberWords[strings.ToLower(s[:n])]
	if !ok {
		return 0, 0
	}
	return v, n
}

// parseReset reads a reset time a host's Pattern captured in its "reset"
// group: a Unix time, an RFC 3339 time, an HTTP date, a duration ("10
// minutes", "in 2h", "37s") or a clock time as parseWhen reads it.
func parseReset(s string, now time.Time) when {
	s = strings.TrimSpace(s)
	if s == "" {
		return when{}
	}
	if allDigits(s) && len(s) >= 9 && len(s) <= 11 {
		return unixTime(s, now)
	}
	if t, err := time.Parse(time.RFC3339, s); err == nil {
		return usable(t, now)
	}
	if t, err := http.ParseTime(s); err == nil {
		return usable(t, now)
	}
	if rest, ok := cutPrefixFold(s, "in "); ok {
		s = rest
	}
	if d, ok := parseDuration(s); ok {
		return after(now, d)
	}
	return parseWhen(s, now)
}

func cutPrefixFold(s, prefix string) (string, bool) {
	if len(s) >= len(prefix) && strings.EqualFold(s[:len(prefix)], prefix) {
		return s[len(prefix):], true
	}
	return s, false
}

func isDigit(c byte) bool  { return '0' <= c && c <= '9' }
func isLetter(c byte) bool { return 'a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' }

func allDigits(s string) bool {
	for i := 0; i < len(s); i++ {
		if !isDigit(s[i]) {
			return false
		}
	}
	return s != ""
}
