package limits

import (
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
)

func TestParseWhen(t *testing.T) {
	newYork := mustZone("America/New_York")
	cases := []struct {
		name string
		in   string
		now  time.Time
		want string // RFC 3339; "" for no usable time
	}{
		{"5pm ahead today", "5pm (Europe/Vilnius)", now, "2026-01-29T17:00:00+02:00"},
		{"5:30pm", "5:30pm", now, "2026-01-29T17:30:00+02:00"},
		{"17:00", "17:00", now, "2026-01-29T17:00:00+02:00"},
		{"9:30 AM with a space", "9:30 AM", now, "2026-01-30T09:30:00+02:00"},
		{"a.m. with dots", "9 a.m.", now, "2026-01-30T09:00:00+02:00"},
		{"12am is midnight", "12am", now, "2026-01-30T00:00:00+02:00"},
		{"12pm is noon", "12pm", now, "2026-01-30T12:00:00+02:00"},
		{"now itself is not past", "4:29pm", time.Date(2026, 1, 29, 16, 29, 0, 0, vilnius), "2026-01-29T16:29:00+02:00"},
		{"a minute ago is tomorrow", "4:28pm", time.Date(2026, 1, 29, 16, 29, 0, 0, vilnius), "2026-01-30T16:28:00+02:00"},
		{"in another zone, ahead there", "2:30pm (Pacific/Auckland)", now, "2026-01-30T14:30:00+13:00"},
		{"Etc zone, still ahead there", "1pm (Etc/GMT+5)", now, "2026-01-29T13:00:00-05:00"},
		{"an old zone alias, past there", "5:10pm (Asia/Calcutta)", now, "2026-01-30T17:10:00+05:30"},
		{"UTC word", "00:00 UTC", now, "2026-01-30T00:00:00Z"},
		{"today's weekday, still ahead", "Thu 11pm", now, "2026-01-29T23:00:00+02:00"},
		{"today's weekday, past: next week", "Thursday 9am", now, "2026-02-05T09:00:00+02:00"},
		{"weekday with a comma", "Mon, 12:00am", now, "2026-02-02T00:00:00+02:00"},
		{"month and day", "Feb 2 at 9pm", now, "2026-02-02T21:00:00+02:00"},
		{"full month name", "February 2 at 9pm", now, "2026-02-02T21:00:00+02:00"},
		{"ordinal day and a year", "Feb 5th, 2026 8:19 PM", now, "2026-02-05T20:19:00+02:00"},
		{"ISO date", "2026-02-01 at 00:00 UTC", now, "2026-02-01T00:00:00Z"},
		{"a date across the new year", "Jan 2, 2am (UTC)", time.Date(2026, 12, 30, 10, 0, 0, 0, time.UTC), "2027-01-02T02:00:00Z"},
		{"a date earlier this year is a year off: not believed", "Jan 28, 2am (UTC)", now, ""},
		{"Feb 29 in a leap year", "Feb 29 at 1am (UTC)", time.Date(2028, 2, 20, 0, 0, 0, 0, time.UTC), "2028-02-29T01:00:00Z"},
		{"Feb 29 in another year", "Feb 29 at 1am (UTC)", now, ""},
		// 2:30am does not exist that night; time.Date's normalisation decides.
		{"a time the spring-forward gap skips", "2:30am", time.Date(2026, 3, 8, 1, 0, 0, 0, newYork), "2026-03-08T01:30:00-05:00"},
		{"after the fall-back", "5pm", time.Date(2026, 11, 1, 1, 0, 0, 0, newYork), "2026-11-01T17:00:00-05:00"},
		{"no minutes and no am/pm", "5", now, ""},
		{"13pm", "13pm", now, ""},
		{"0am", "0am", now, ""},
		{"25:00", "25:00", now, ""},
		{"5:75pm", "5:75pm", now, ""},
		{"an unknown zone", "5pm (Nowhere/Land)", now, ""},
		{"a path is no zone: the time is now's", "5pm (../../etc/passwd)", now, "2026-01-29T17:00:00+02:00"},
		{"words", "(every 5h and every week.)", now, ""},
		{"5 minutes is no clock", "5 minutes", now, ""},
		{"5 amazing things is no clock", "5 amazing things", now, ""},
		{"RFC 3339 in UTC is UTC, not now's zone", "2026-01-29T18:00:00Z (2056)", now, "2026-01-29T18:00:00Z"},
		{"RFC 3339 with an offset", "2026-01-29T23:00:00+05:30", now, "2026-01-29T23:00:00+05:30"},
		{"an offset past any zone's", "2026-01-29T23:00:00+15:00", now, ""},
		{"a date alone, day first: the start of the day", "21 February 2026 for your limit to reset", now, "2026-02-21T00:00:00+02:00"},
		{"a date alone, month first", "Feb 21st, 2026.", now, "2026-02-21T00:00:00+02:00"},
		{"a date alone, in the past", "21 January 2026", now, ""},
		{"year, month and day in numbers, then the time", "2026 2 3 22:48. Learn More", now, "2026-02-03T22:48:00+02:00"},
		{"year, month and day: a month past twelve", "2026 13 2 22:48", now, ""},
		{"year, month and day: a day past the month's", "2026 2 30 22:48", now, ""},
		{"a date alone that does not exist", "31 April 2026", now, ""},
		{"a word that begins like a month is none", "21 Mayday 2026", now, ""},
		{"a date alone needs its year", "21 February for your limit to reset", now, ""},
		{"a date with a time is that time, not the day's start", "August 20, 2026 at 12:31", time.Date(2026, 8, 17, 12, 0, 0, 0, time.UTC), "2026-08-20T12:31:00Z"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			w := parseWhen(tc.in, tc.now)
			got := ""
			if w.ok {
				got = w.at.Format(time.RFC3339)
				assert.False(t, w.at.Before(tc.now), "a reset is never before now")
			}
			assert.Equal(t, tc.want, got)
		})
	}
}

func TestParseDuration(t *testing.T) {
	cases := []struct {
		in   string
		want time.Duration
		ok   bool
	}{
		{"5 days 22 hours 11 minutes.", 5*24*time.Hour + 22*time.Hour + 11*time.Minute, true},
		{"3 hours, 2 minutes", 3*time.Hour + 2*time.Minute, true},
		{"2 hours and 5 minutes", 2*time.Hour + 5*time.Minute, true},
		{"2h 10m", 2*time.Hour + 10*time.Minute, true},
		{"6m0s", 6 * time.Minute, true},
		{"1h2m3s", time.Hour + 2*time.Minute + 3*time.Second, true},
		{"1.6s.", 1600 * time.Millisecond, true},
		{"20ms", 20 * time.Millisecond, true},
		{"37s", 37 * time.Second, true},
		{"1 week", 7 * 24 * time.Hour, true},
		{"11\nminutes", 11 * time.Minute, true},
		{"0s", 0, true},
		{"one minute", time.Minute, true},
		{"an hour and 5 minutes", time.Hour + 5*time.Minute, true},
		{"Two Days", 48 * time.Hour, true},
		{"a moment", 0, false},
		{"one", 0, false},
		{"a few minutes", 0, false},
		{"5pm", 0, false},
		{"", 0, false},
		{"36 days", 0, false},
		{"99999999999999999999 hours", 0, false},
	}
	for _, tc := range cases {
		got, ok := parseDuration(tc.in)
		assert.Equal(t, tc.ok, ok, tc.in)
		assert.Equal(t, tc.want, got, tc.in)
	}
}

// A reset is believed up to MaxAhead after now, and not before now.
func TestUsable(t *testing.T) {
	assert.True(t, usable(now, now).ok)
	assert.True(t, usable(now.Add(MaxAhead), now).ok)
	assert.False(t, usable(now.Add(MaxAhead+time.Second), now).ok)
	assert.False(t, usable(now.Add(-time.Second), now).ok)
	assert.True(t, usable(now.Add(-time.Second), now).named, "a past time was still named")
}
