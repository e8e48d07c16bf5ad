-- The shared breaker of a fleet of workers. Every call of a worker runs this
-- one script, atomically, on Redis's own clock: Check, Record, the manual
-- controls and the reads are its operations (ARGV[1]). No lock is held
-- between calls; a half-open probe is a lease with an owner and a deadline.
--
-- KEYS, all under one hash tag, so that Redis Cluster keeps them on one slot:
--   1 the state (a hash), 2 the error counts by fingerprint (a hash),
--   3 the calls of the rolling hour (a sorted set, scored by time in ms,
--     each member "<seq>:<calls>"), 4 the outage replays by worker (a hash),
--   5 the spend of the rolling hour and of the burn window (a sorted set,
--     scored by time in ms, each member
--     "<seq>:<input tokens>:<output tokens>:<cost>"), kept with an hourly
--     cap or a burn-rate cap.
-- ARGV: 1 op, 2 worker id, 3 idle expiry in ms, 4 the cooldowns in ms of
--   the 1st, 2nd, ... open of a streak ("30000,60000"; the last repeats),
--   5 probe lease in ms, 6 calls per hour (0: no budget), 7 consecutive
--   failures (-1: off), 8 same error count (-1: off), 9 same error in a row
--   (0: off), 10 fingerprints kept, 11 tokens over the fleet's life (0: no
--   cap), 12 US dollars over its life (0: no cap), 13 tokens per hour (0: no
--   cap), 14 US dollars per hour (0: no cap), 15 openings in a row after
--   which the breaker gives up (0: never), 16 the share of a usage window
--   in percent (0: no cap), 17 '1' when that share stops rather than waits,
--   18 US dollars a minute (0: no cap), 19 tokens a minute (0: no cap), 20
--   the burn window in ms; then the operation's own arguments (arg(1),
--   arg(2), ...).
--
-- A provider limit in force is in the state: lkind ('w' a wait, 's' a stop),
-- luntil (when a wait lifts, in ms of the wall clock: a provider's reset is
-- a time, not a delay), lreason (its reason, JSON) and lsource (the host
-- whose response it was, '' when not known). The spend is sin,
-- sout and scost over the fleet's life, and hin, hout and hcost in the
-- rolling hour, and bin, bout and bcost in the burn window: bw is the
-- window (ms) those are the sums of, bcut the time up to which spend has
-- left them, bseq the last entry (sseq) they hold. The provider's usage windows are fields of the state too:
-- '~<length in ns>:<source>' holds the latest report of that window,
-- '<seq>:<share used>:<reset in ms, 0 when not known>:<until in ms>', wseq
-- numbers them, and wstop is the stop (a reason, JSON) that a report at
-- the share puts in force with StopAtWindowShare. Every number is stored
-- with 17 significant digits, so that a cost in dollars reads back as it
-- was written.

local S, E, C, R, SP = KEYS[1], KEYS[2], KEYS[3], KEYS[4], KEYS[5]
local op, worker = ARGV[1], ARGV[2]
local ttl, lease = tonumber(ARGV[3]), tonumber(ARGV[5])
local maxCalls, maxCF, maxSame, maxInRow, maxFP =
	tonumber(ARGV[6]), tonumber(ARGV[7]), tonumber(ARGV[8]), tonumber(ARGV[9]), tonumber(ARGV[10])
local maxTok, maxCost, maxTokH, maxCostH =
	tonumber(ARGV[11]), tonumber(ARGV[12]), tonumber(ARGV[13]), tonumber(ARGV[14])
local maxOpens = tonumber(ARGV[15])
local maxShare, stopAtShare = tonumber(ARGV[16]), ARGV[17] == '1'
local maxCostM, maxTokM, bw = tonumber(ARGV[18]), tonumber(ARGV[19]), tonumber(ARGV[20])
local function arg(i) return ARGV[20 + i] end
local HOUR = 3600000
local MAXWAIT = 35 * 24 * HOUR -- loopbreaker.MaxProviderLimitWait
local MINWAIT = 1000 -- a reset not after now (the provider said at once) is waited out for a second, as in the core
local MAXN = 9007199254740992 -- 2^53: token sums saturate here, exact below
local CLOSED, OPEN, HALF = 0, 1, 2
local MAXWINDOWS = 8 -- the windows kept, the oldest report out (as in the core)
local hourly = maxTokH > 0 or maxCostH > 0
local burning = maxCostM > 0 or maxTokM > 0
local keepSpend = hourly or burning -- the spend's entries are kept

local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)

local function fmt(v)
	if type(v) == 'number' then return string.format('%.17g', v) end
	return tostring(v)
end

local h, dirty = {}, {}
local raw = redis.call('HGETALL', S)
for i = 1, #raw, 2 do h[raw[i]] = raw[i + 1] end
local function str(k) return h[k] or '' end
-- num reads a number of the state; a field that holds something else (a
-- key edited by hand, another program's data) is an error, never a zero.
local function num(k)
	local v = h[k]
	if v == nil or v == '' then return 0 end
	local n = tonumber(v)
	if n == nil or n ~= n or n == math.huge or n == -math.huge then
		error('loopbreaker: the field ' .. k .. ' of ' .. S .. ' is not a number: ' .. string.sub(v, 1, 40))
	end
	return n
end
local gone = {}
local function set(k, v) h[k] = fmt(v); dirty[k] = true end
local function unset(k) h[k] = nil; dirty[k] = nil; gone[#gone + 1] = k end
do
	local st = num('st')
	if st ~= 0 and st ~= 1 and st ~= 2 then
		error('loopbreaker: the field st of ' .. S .. ' is no state: ' .. str('st'))
	end
end

local function cooldownFor(n)
	local list = {}
	for v in string.gmatch(ARGV[4], '[^,]+') do list[#list + 1] = tonumber(v) end
	return list[math.min(n, #list)]
end

local function clearLease() set('powner', ''); set('ptoken', ''); set('pdead', '') end

-- The error of the iteration being recorded, if it failed: a give-up whose
-- last reason quotes none quotes it.
local failedFP, failedSample = '', ''

-- open opens the circuit for reason (JSON) at the time at (ms), as the next
-- open of the streak. The open that reaches maxOpens gives up: the circuit
-- is held, with a gave_up reason, and the reason given is kept in 'before'.
local function open(reason, at)
	local n = num('copens') + 1
	set('st', OPEN); set('opened', at)
	set('opens', num('opens') + 1); set('copens', n)
	if maxOpens > 0 and n >= maxOpens then
		local last = cjson.decode(reason)
		local r = { kind = 'gave_up', count = n, threshold = maxOpens }
		for _, k in ipairs({ 'fingerprint', 'sample', 'task', 'action' }) do r[k] = last[k] end
		if (r.sample == nil or r.sample == '') and failedFP ~= '' then
			r.fingerprint = failedFP
			if failedSample ~= '' then r.sample = failedSample end
		end
		set('reason', cjson.encode(r)); set('held', '1'); set('cd', 0); set('before', reason)
	else
		set('reason', reason); set('held', ''); set('cd', cooldownFor(n)); set('before', '')
	end
	clearLease()
end

local function close()
	set('st', CLOSED); set('reason', ''); set('held', ''); set('before', '')
	set('opened', ''); set('cd', ''); set('copens', 0); set('cf', 0)
	clearLease()
end

-- hold opens the circuit, or keeps it open, for a person or the host: no
-- cooldown ends it.
local function hold(reason)
	if num('st') ~= OPEN then
		set('opened', now); set('opens', num('opens') + 1); set('copens', num('copens') + 1)
	end
	set('st', OPEN); set('reason', reason); set('held', '1'); set('cd', 0)
	clearLease()
end

-- advance: an open circuit goes half-open once its cooldown is over; a
-- probe whose lease ran out is lost (its worker died, or outlived the
-- lease), and the circuit opens again from the lease's end.
local function advance()
	for _ = 1, 4 do
		local st = num('st')
		if st == OPEN and str('held') ~= '1' and now >= num('opened') + num('cd') then
			set('st', HALF); clearLease()
		elseif st == HALF and str('ptoken') ~= '' and now >= num('pdead') then
			open('{"kind":"probe_lost"}', num('pdead'))
		else
			return
		end
	end
end

local function member(m) return tonumber(string.match(m, ':(%d+)$')) end

-- prune forgets the calls that left the rolling hour.
local function prune()
	local cutoff = now - HOUR
	local old = redis.call('ZRANGEBYSCORE', C, '-inf', cutoff)
	if #old == 0 then return end
	local gone = 0
	for _, m in ipairs(old) do gone = gone + member(m) end
	redis.call('ZREMRANGEBYSCORE', C, '-inf', cutoff)
	set('used', math.max(num('used') - gone, 0))
end

local function addCalls(n)
	n = tonumber(n) or 0
	if maxCalls <= 0 or n <= 0 then return end
	local seq = num('cseq') + 1
	set('cseq', seq)
	redis.call('ZADD', C, now, seq .. ':' .. n)
	set('used', num('used') + n)
end

-- budgetRetry returns the ms until the hour holds fewer than maxCalls calls.
local function budgetRetry()
	local excess = num('used') - maxCalls + 1
	local entries = redis.call('ZRANGE', C, 0, excess - 1, 'WITHSCORES')
	for i = 1, #entries, 2 do
		excess = excess - member(entries[i])
		if excess <= 0 then return tonumber(entries[i + 1]) + HOUR - now end
	end
	return 0
end

local function spent() return maxCalls > 0 and num('used') >= maxCalls end

-- The spend.

local function spendOf(m)
	local i, o, c = string.match(m, '^%d+:([^:]+):([^:]+):([^:]+)$')
	return tonumber(i) or 0, tonumber(o) or 0, tonumber(c) or 0
end

-- pruneSpend forgets the spend that left the rolling hour. The hour's sums
-- go down by what left, and are exactly zero once nothing is left.
local function pruneSpend()
	local cutoff = now - HOUR
	local old = redis.call('ZRANGEBYSCORE', SP, '-inf', cutoff)
	if #old == 0 then return end
	local gi, go, gc = 0, 0, 0
	for _, m in ipairs(old) do
		local i, o, c = spendOf(m)
		gi, go, gc = gi + i, go + o, gc + c
	end
	redis.call('ZREMRANGEBYSCORE', SP, '-inf', cutoff)
	if redis.call('ZCARD', SP) == 0 then
		set('hin', 0); set('hout', 0); set('hcost', 0)
	else
		set('hin', math.max(num('hin') - gi, 0)); set('hout', math.max(num('hout') - go, 0))
		set('hcost', math.max(num('hcost') - gc, 0))
	end
end

-- addSpend adds input and output tokens and a cost (all clean: finite,
-- not negative) spent now.
local function addSpend(i, o, c)
	i, o, c = tonumber(i) or 0, tonumber(o) or 0, tonumber(c) or 0
	if i <= 0 and o <= 0 and c <= 0 then return end
	set('sin', math.min(num('sin') + i, MAXN)); set('sout', math.min(num('sout') + o, MAXN))
	set('scost', num('scost') + c)
	if not keepSpend then return end
	local seq = num('sseq') + 1
	set('sseq', seq)
	redis.call('ZADD', SP, now, seq .. ':' .. fmt(i) .. ':' .. fmt(o) .. ':' .. fmt(c))
	if hourly then
		set('hin', math.min(num('hin') + i, MAXN)); set('hout', math.min(num('hout') + o, MAXN))
		set('hcost', num('hcost') + c)
	end
	if burning then
		set('bin', math.min(num('bin') + i, MAXN)); set('bout', math.min(num('bout') + o, MAXN))
		set('bcost', num('bcost') + c); set('bseq', seq)
	end
end

-- The burn rate: the spend of the last bw ms, a minute at a time.

-- pruneBurn takes out of the burn window's sums the spend that left it.
-- Sums of another window (a worker of other settings), sums that miss
-- entries (added by a worker without a burn-rate cap, or from before it:
-- bseq is the last entry they hold), or none (a fleet's state from before
-- the burn rate) are added up afresh from the entries kept.
local function pruneBurn()
	local cutoff = now - bw
	if str('bw') ~= fmt(bw) or num('bseq') ~= num('sseq') then
		local bi, bo, bc = 0, 0, 0
		for _, m in ipairs(redis.call('ZRANGEBYSCORE', SP, '(' .. fmt(cutoff), '+inf')) do
			local i, o, c = spendOf(m)
			bi, bo, bc = bi + i, bo + o, bc + c
		end
		set('bin', math.min(bi, MAXN)); set('bout', math.min(bo, MAXN)); set('bcost', bc)
		set('bcut', cutoff); set('bw', bw); set('bseq', num('sseq'))
		return
	end
	local last = num('bcut')
	if cutoff <= last then return end
	set('bcut', cutoff)
	local old = redis.call('ZRANGEBYSCORE', SP, '(' .. fmt(last), fmt(cutoff))
	if #old == 0 then return end
	if #redis.call('ZRANGEBYSCORE', SP, '(' .. fmt(cutoff), '+inf', 'LIMIT', 0, 1) == 0 then
		set('bin', 0); set('bout', 0); set('bcost', 0)
		return
	end
	local gi, go, gc = 0, 0, 0
	for _, m in ipairs(old) do
		local i, o, c = spendOf(m)
		gi, go, gc = gi + i, go + o, gc + c
	end
	set('bin', math.max(num('bin') - gi, 0)); set('bout', math.max(num('bout') - go, 0))
	set('bcost', math.max(num('bcost') - gc, 0))
end

-- burnReached returns 'c' when the rate in dollars a minute is at its
-- cap, else 't' when the rate in tokens is, else '': the core's
-- arithmetic, so that both decide alike at the cap.
local function burnReached()
	if not burning then return '' end
	local minutes = bw / 60000
	if maxCostM > 0 and (num('bcost') / minutes) * 100 / maxCostM >= 100 then return 'c' end
	if maxTokM > 0 and (math.min(num('bin') + num('bout'), MAXN) / minutes) * 100 / maxTokM >= 100 then return 't' end
	return ''
end

-- burnRetry returns the ms until the burn window's spend is below its caps
-- (a minute's cap times the window's minutes), at least a second: the
-- rate and the sum it is made of are floats, which may round apart at the
-- cap.
local function burnRetry()
	local minutes = bw / 60000
	local tokCap, costCap = 0, maxCostM * minutes
	if maxTokM > 0 then tokCap = math.ceil(maxTokM * minutes) end
	local function over(i, o, c)
		return tokCap > 0 and math.min(i + o, MAXN) >= tokCap or costCap > 0 and c >= costCap
	end
	if not over(num('bin'), num('bout'), num('bcost')) then return 1000 end
	local cutoff = num('bcut')
	local li, lo, lc = 0, 0, 0
	local from, batch = 0, 256
	while true do
		local es = redis.call('ZREVRANGE', SP, from, from + batch - 1, 'WITHSCORES')
		if #es == 0 then return 1000 end
		for k = 1, #es, 2 do
			local at = tonumber(es[k + 1])
			if at <= cutoff then return 1000 end
			local i, o, c = spendOf(es[k])
			if over(li + i, lo + o, lc + c) then return math.max(at + bw - now, 1000) end
			li, lo, lc = li + i, lo + o, lc + c
		end
		from = from + batch
	end
end

-- The provider's usage windows.

-- reports returns the reports kept, oldest first (read once a call, again
-- after a change: see windowsChanged). A field that is no report (a key
-- edited by hand) is an error, never a share of zero.
local reportsRead
local function windowsChanged() reportsRead = nil end
local TILDE = string.byte('~')
local function reports()
	if reportsRead then return reportsRead end
	local rs = {}
	for k, v in pairs(h) do
		if string.byte(k, 1) == TILDE then
			local len, src = string.match(k, '^~(%d+):(.*)$')
			local seq, used, reset, untilMs = string.match(v, '^(%d+):([^:]+):(%d+):(%d+)$')
			used = tonumber(used)
			if len == nil or seq == nil or used == nil or not (used >= 0 and used <= 100) then
				error('loopbreaker: the field ' .. string.sub(k, 1, 40) .. ' of ' .. S .. ' is not a window report: ' .. string.sub(v, 1, 40))
			end
			rs[#rs + 1] = { key = k, len = len, src = src, seq = tonumber(seq), used = used,
				reset = tonumber(reset), untilMs = tonumber(untilMs) }
		end
	end
	table.sort(rs, function(a, b) return a.seq < b.seq end)
	reportsRead = rs
	return rs
end

-- pruneWindows forgets the reports that are over.
local function pruneWindows()
	for _, r in ipairs(reports()) do
		if now >= r.untilMs then unset(r.key); windowsChanged() end
	end
end

-- clearWindows forgets every report, and the stop of the share.
local function clearWindows()
	for _, r in ipairs(reports()) do unset(r.key) end
	windowsChanged()
	set('wstop', '')
end

-- windowSeen records a report of the window of len (ns, '0' when not
-- known) and src: used (percent), reset (ms of the wall clock; '' when not
-- known: it counts for len, or wait ms when len is 0), and stop, the stop
-- it puts in force ('' for none: the worker judged the share). A reset
-- not after now means the window started again: the report of it is
-- forgotten.
local function windowSeen(len, src, used, reset, wait, stop)
	used = tonumber(used)
	if used == nil or not (used >= 0) or string.match(len or '', '^%d+$') == nil then return end
	used = math.min(used, 100)
	local key = '~' .. len .. ':' .. (src or '')
	windowsChanged()
	if h[key] then unset(key) end
	reset = tonumber(reset) or 0
	local untilMs
	if reset == 0 then
		local lenMs = tonumber(len) / 1000000
		if lenMs == 0 then lenMs = tonumber(wait) or 0 end
		untilMs = math.floor(now + lenMs)
	elseif reset <= now then
		return
	else
		untilMs = reset
	end
	untilMs = math.min(untilMs, now + MAXWAIT)
	local rs = reports()
	if #rs >= MAXWINDOWS then unset(rs[1].key) end
	windowsChanged()
	local seq = num('wseq') + 1
	set('wseq', seq)
	set(key, seq .. ':' .. fmt(used) .. ':' .. fmt(reset) .. ':' .. fmt(untilMs))
	if (stop or '') ~= '' and str('wstop') == '' then set('wstop', stop) end
end

-- windowWait returns when the report at the share that lasts longest is
-- over (ms), 0 when none refuses: with the share that waits.
local function windowWait()
	if maxShare <= 0 or stopAtShare then return 0 end
	local best = 0
	for _, r in ipairs(reports()) do
		if r.used >= maxShare and r.untilMs > best then best = r.untilMs end
	end
	return best
end

-- caps returns the caps set, in the order a refusal names them: over the
-- fleet's life before the hour, cost before tokens. Each is its code, what
-- was spent against it, and the cap.
local function caps()
	local cs = {}
	if maxCost > 0 then cs[#cs + 1] = { 'c', num('scost'), maxCost } end
	if maxTok > 0 then cs[#cs + 1] = { 't', math.min(num('sin') + num('sout'), MAXN), maxTok } end
	if maxCostH > 0 then cs[#cs + 1] = { 'hc', num('hcost'), maxCostH } end
	if maxTokH > 0 then cs[#cs + 1] = { 'ht', math.min(num('hin') + num('hout'), MAXN), maxTokH } end
	return cs
end

-- capReached returns the code of the first cap spent; '' when none is.
local function capReached()
	for _, c in ipairs(caps()) do
		if c[2] >= c[3] then return c[1] end
	end
	return ''
end

-- capWarned returns the code of the cap most spent, once 80% of it is.
local function capWarned()
	local best, share = '', -1
	for _, c in ipairs(caps()) do
		local s = c[2] * 100 / c[3]
		if s > share then best, share = c[1], s end
	end
	if share < 80 then return '' end
	return best
end

-- spendRetry returns the ms until the hour's spend is below every hourly
-- cap it reached: the newest entries are what is left once an older one
-- has gone.
local function spendRetry()
	local function over(i, o, c)
		return maxTokH > 0 and i + o >= maxTokH or maxCostH > 0 and c >= maxCostH
	end
	if not over(num('hin'), num('hout'), num('hcost')) then return 0 end
	local li, lo, lc = 0, 0, 0
	local from, batch = 0, 256
	while true do
		local es = redis.call('ZREVRANGE', SP, from, from + batch - 1, 'WITHSCORES')
		if #es == 0 then return 0 end
		for k = 1, #es, 2 do
			local i, o, c = spendOf(es[k])
			if over(li + i, lo + o, lc + c) then return tonumber(es[k + 1]) + HOUR - now end
			li, lo, lc = li + i, lo + o, lc + c
		end
		from = from + batch
	end
end

-- The provider limit.

-- limitNow returns the limit in force: 's' a stop, 'w' a wait, '' none. A
-- wait that has lifted is forgotten.
local function limitNow()
	local k = str('lkind')
	if k == 'w' and now >= num('luntil') then
		set('lkind', ''); set('luntil', ''); set('lreason', ''); set('lsource', '')
		return ''
	end
	return k
end

-- limitSeen puts a limit in force, unless the one in force outlasts it: a
-- stop outlasts every wait, and of two waits the later reset wins. kind is
-- 's' or 'w' ('' for none); reset is when a wait lifts (ms, the wall
-- clock), 0 when the provider did not say: it lasts wait ms from now.
local function limitSeen(kind, reset, wait, reason, source)
	local cur = limitNow()
	if kind == 's' then
		if cur == 's' then return end
		set('lkind', 's'); set('luntil', ''); set('lreason', reason); set('lsource', source or '')
		return
	elseif kind ~= 'w' then
		return
	end
	local untilMs = tonumber(reset) or 0
	if untilMs <= 0 then untilMs = now + (tonumber(wait) or 0) end
	if untilMs <= now then untilMs = now + MINWAIT end
	untilMs = math.min(untilMs, now + MAXWAIT)
	if cur == 's' or cur == 'w' and untilMs <= num('luntil') then return end
	set('lkind', 'w'); set('luntil', untilMs); set('lreason', reason); set('lsource', source or '')
end

local function clearLimit() set('lkind', ''); set('luntil', ''); set('lreason', ''); set('lsource', '') end

-- replay adds, once, the calls and the spend a worker recorded while Redis
-- was out of its reach: id names the outage; calls, i, o and c are all of
-- it so far; what an earlier attempt with the same id added is not added
-- again.
local function replay(id, calls, i, o, c)
	if id == '' then return end
	local done = { 0, 0, 0, 0 }
	local prev = redis.call('HGET', R, worker)
	if prev then
		local pid, pc, pi, po, pcost = string.match(prev, '^(%d+):(%d+):([^:]+):([^:]+):([^:]+)$')
		if pid == nil then pid, pc = string.match(prev, '^(.*):(%d+)$') end
		if pid == id then
			done = { tonumber(pc) or 0, tonumber(pi) or 0, tonumber(po) or 0, tonumber(pcost) or 0 }
		end
	end
	local now4 = { tonumber(calls) or 0, tonumber(i) or 0, tonumber(o) or 0, tonumber(c) or 0 }
	if now4[1] > done[1] then addCalls(now4[1] - done[1]) end
	addSpend(math.max(now4[2] - done[2], 0), math.max(now4[3] - done[3], 0), math.max(now4[4] - done[4], 0))
	local keep = {}
	for k = 1, 4 do keep[k] = fmt(math.max(now4[k], done[k])) end
	redis.call('HSET', R, worker, id .. ':' .. table.concat(keep, ':'))
end

local allow, probe, token, why = 0, 0, '', ''

advance()
if maxCalls > 0 then prune() end
if burning then pruneBurn() end
if hourly then
	pruneSpend()
elseif burning then
	redis.call('ZREMRANGEBYSCORE', SP, '-inf', now - bw)
end
pruneWindows()

if op == 'check' then
	-- arg 1: peek (1: only look, take nothing)
	local peek = arg(1) == '1'
	local st, lim, capped = num('st'), limitNow(), capReached()
	if lim == 's' then
		why = 'limit'
	elseif capped == 'c' or capped == 't' then
		why = 'spend'
	elseif str('wstop') ~= '' then
		why = 'window'
	elseif st == OPEN then
		-- refused
	elseif lim == 'w' then
		why = 'limit'
	elseif windowWait() > 0 then
		why = 'window'
	elseif capped ~= '' then
		why = 'spend'
	elseif burnReached() ~= '' then
		why = 'burn'
	elseif spent() then
		why = 'budget'
	elseif st == HALF then
		if str('ptoken') == '' and not peek then
			local seq = num('pseq') + 1
			set('pseq', seq); set('ptoken', worker .. '/' .. seq)
			set('powner', worker); set('pdead', now + lease)
			allow, probe, token = 1, 1, str('ptoken')
		end
	else
		allow = 1
	end
	if peek then allow, probe = 0, 0 end
	if allow == 1 then addCalls(1) end -- the iteration's call, reserved now
elseif op == 'rejoin' then
	-- arg 1: outage id, 2: calls made during it, 3-5: input tokens, output
	-- tokens and cost spent during it, 6-9: the limit in force on the
	-- worker (kind, reset, wait, reason; see limitSeen), 10: the stop of
	-- the window share it put in force ('' for none), 11 on: the reports of
	-- usage windows in force on it, six arguments each (see 'window')
	replay(arg(1), arg(2), arg(3), arg(4), arg(5))
	limitSeen(arg(6), arg(7), arg(8), arg(9))
	if (arg(10) or '') ~= '' and str('wstop') == '' then set('wstop', arg(10)) end
	local i = 11
	while arg(i + 5) ~= nil do
		windowSeen(arg(i), arg(i + 1), arg(i + 2), arg(i + 3), arg(i + 4), arg(i + 5))
		i = i + 6
	end
elseif op == 'window' then
	-- A report of a usage window: arg 1: its length in ns ('0' when not
	-- known), 2: its source, 3: the share used (percent), 4: its reset (ms
	-- of the wall clock, '' when not known), 5: how long a report of no
	-- length counts (ms), 6: the stop it puts in force (see windowSeen)
	windowSeen(arg(1), arg(2), arg(3), arg(4), arg(5), arg(6))
elseif op == 'meter' then
	-- As it happens, during an iteration: arg 1: calls sent, 2-4: input
	-- tokens, output tokens and cost, 5-8: a limit seen (kind, reset, wait,
	-- reason), 9: the probe token the worker holds, given back with a limit,
	-- 10: the limit's source
	addCalls(arg(1))
	addSpend(arg(2), arg(3), arg(4))
	if arg(5) ~= '' then
		limitSeen(arg(5), arg(6), arg(7), arg(8), arg(10))
		if num('st') == HALF and arg(9) ~= '' and arg(9) == str('ptoken') then clearLease() end
	end
elseif op == 'lift' then
	-- arg 1: the source that answered again: a wait it put in force lifts
	if arg(1) ~= '' and limitNow() == 'w' and str('lsource') == arg(1) then clearLimit() end
elseif op == 'record' then
	-- arg 1: probe token, 2: outcome (s, f, n, or l for a provider limit),
	-- 3: fingerprint (a failure's, or of the error a success noticed), 4: calls beyond the one Check reserved, 5: the reason
	-- (JSON) a signal of the worker's own opened its circuit with, 6: error
	-- sample, 7: '1' when that reason holds the circuit (no cooldown ends
	-- it), 8-10: input tokens, output tokens and cost, 11-14: the limit the
	-- iteration hit (kind, reset, wait, reason)
	local tok, outcome, fp = arg(1), arg(2), arg(3)
	local localTrip, sample, localHold = arg(5), arg(6), arg(7) == '1'
	addCalls(arg(4))
	addSpend(arg(8), arg(9), arg(10))
	if outcome == 'l' then limitSeen(arg(11), arg(12), arg(13), arg(14)) end
	if localHold then
		hold(localTrip)
		if outcome == 'n' or outcome == 'l' then
			set('ni', num('ni') + 1)
		else
			set('it', num('it') + 1)
			if outcome == 'f' then set('cf', num('cf') + 1); set('tf', num('tf') + 1) end
		end
		outcome = 'held'
	end
	local st = num('st')
	local holder = st == HALF and tok ~= '' and tok == str('ptoken')
	if outcome == 'held' then
		-- counted above
	elseif outcome == 'n' or outcome == 'l' then
		set('ni', num('ni') + 1)
		if holder then clearLease() end -- the next Check gets the probe
	else
		set('it', num('it') + 1)
		local failed = outcome == 'f'
		local count = 0
		-- counts fp, a failure's error or one a success noticed, in the
		-- error history
		local function countError()
			count = redis.call('HINCRBY', E, fp, 1)
			-- '@<fingerprint>' is when it was last seen (a sequence), so
			-- that a full history forgets the one seen least recently, as
			-- the breaker does
			local seq = num('eseq') + 1
			set('eseq', seq)
			redis.call('HSET', E, '@' .. fp, seq)
			if count == 1 and maxFP > 0 then
				local all, seen, fps = redis.call('HGETALL', E), {}, {}
				for i = 1, #all, 2 do
					if string.sub(all[i], 1, 1) == '@' then
						seen[string.sub(all[i], 2)] = tonumber(all[i + 1]) or 0
					else
						fps[#fps + 1] = all[i]
					end
				end
				if #fps > maxFP then
					local oldest, oldestSeq = nil, nil
					for _, other in ipairs(fps) do
						local at = seen[other] or 0
						if other ~= fp and (oldestSeq == nil or at < oldestSeq) then
							oldest, oldestSeq = other, at
						end
					end
					if oldest then
						redis.call('HDEL', E, oldest, '@' .. oldest); set('evicted', num('evicted') + 1)
					end
				end
			end
		end
		if failed then
			failedFP, failedSample = fp, sample
			set('cf', num('cf') + 1); set('tf', num('tf') + 1)
			if str('lastfail') == '1' and str('lastfp') == fp then
				set('inrow', num('inrow') + 1)
			else
				set('inrow', 1)
			end
			set('lastfp', fp); set('lastfail', '1')
			countError()
		else
			set('cf', 0); set('inrow', 0); set('lastfail', '')
			if fp ~= '' then countError() end -- noticed: the same error, no failure
		end
		if st == CLOSED or holder then
			local reason
			local function evidence(kind, n, limit)
				local r = { kind = kind, count = n, threshold = limit }
				if kind ~= 'consecutive_failures' then
					r.fingerprint = fp
					if sample ~= '' then r.sample = sample end
				end
				return cjson.encode(r)
			end
			if failed and maxCF >= 0 and num('cf') >= maxCF then
				reason = evidence('consecutive_failures', num('cf'), maxCF)
			elseif failed and maxInRow > 0 and num('inrow') >= maxInRow then
				reason = evidence('same_error_in_a_row', num('inrow'), maxInRow)
			elseif fp ~= '' and maxSame >= 0 and count >= maxSame then
				reason = evidence('same_error', count, maxSame)
			elseif localTrip ~= '' then
				reason = localTrip
			elseif holder and failed then
				local r = { kind = 'probe_failed', fingerprint = fp }
				if sample ~= '' then r.sample = sample end
				reason = cjson.encode(r)
			end
			if reason then
				open(reason, now)
			elseif holder then
				close()
			end
		end
	end
elseif op == 'abort' then
	-- arg 1: the held reason (JSON)
	-- an abort of an aborted circuit keeps what came before the first
	if num('st') ~= CLOSED and cjson.decode(str('reason')).kind ~= 'aborted' then
		local cur = str('reason')
		if str('before') ~= '' then
			-- a reason read with what came before it (an abort's, a
			-- give-up's): that goes along, nested
			local r = cjson.decode(cur)
			r.before = cjson.decode(str('before'))
			cur = cjson.encode(r)
		end
		set('before', cur)
	end
	hold(arg(1))
elseif op == 'force' then
	hold(arg(1))
elseif op == 'release' then
	-- arg 1: the probe token a worker gives back unused
	if num('st') == HALF and arg(1) ~= '' and arg(1) == str('ptoken') then clearLease() end
elseif op == 'resume' then
	-- a person dealt with what stopped the fleet: a provider limit in
	-- force is lifted too; the spend is kept
	close()
	clearLimit()
	clearWindows()
	redis.call('DEL', E)
	set('inrow', 0); set('lastfp', ''); set('lastfail', '')
	set('gen', num('gen') + 1)
elseif op == 'reset' then
	-- everything but the calls and the spend, which were made
	local keep = {
		gen = num('gen') + 1, used = num('used'), cseq = num('cseq'), pseq = num('pseq'),
		sin = num('sin'), sout = num('sout'), scost = num('scost'),
		hin = num('hin'), hout = num('hout'), hcost = num('hcost'), sseq = num('sseq'),
		bin = num('bin'), bout = num('bout'), bcost = num('bcost'), bcut = num('bcut'), bseq = num('bseq'),
	}
	local window = str('bw')
	redis.call('DEL', S, E)
	h, dirty, gone = {}, {}, {}
	windowsChanged()
	for k, v in pairs(keep) do set(k, v) end
	set('bw', window)
end

local st, lim, capped = num('st'), limitNow(), capReached()
local retry = 0
if why == 'limit' and lim == 'w' then
	retry = math.min(num('luntil') - now, MAXWAIT)
elseif why == 'spend' and (capped == 'hc' or capped == 'ht') then
	retry = spendRetry()
elseif why == 'window' then
	if str('wstop') == '' then retry = math.max(windowWait() - now, 0) end
elseif why == 'burn' then
	retry = burnRetry()
elseif why == 'budget' then
	retry = budgetRetry()
elseif st == OPEN and str('held') ~= '1' then
	retry = num('opened') + num('cd') - now
end

if #gone > 0 then redis.call('HDEL', S, unpack(gone)) end
local out = {}
for k in pairs(dirty) do
	out[#out + 1] = k
	out[#out + 1] = h[k]
end
if #out > 0 then redis.call('HSET', S, unpack(out)) end

-- No key expires while the circuit is open, half-open or held, while the
-- provider stopped the fleet, its spend cap over its life is reached or
-- the window share stopped it; nor while a provider limit is in force or
-- a usage window's report counts: the idle expiry runs from the time the
-- last of them is over. An idle breaker's keys go after ttl.
local windows = reports()
local keep = st ~= CLOSED or lim == 's' or capped == 'c' or capped == 't' or str('wstop') ~= ''
local lasts = 0
if lim == 'w' then lasts = num('luntil') - now end
for _, r in ipairs(windows) do lasts = math.max(lasts, r.untilMs - now) end
local expiry = ttl + math.max(lasts, 0)
for _, k in ipairs(KEYS) do
	if k == SP and not keepSpend then
		-- kept only with an hourly or a burn-rate cap
	elseif keep then
		redis.call('PERSIST', k)
	else
		redis.call('PEXPIRE', k, expiry)
	end
end

local lreason, luntil = '', 0
if lim ~= '' then lreason, luntil = str('lreason'), num('luntil') end
local reply = {
	st, str('reason'), str('held'), str('before'), allow, probe, token, retry,
	num('used'), why, num('gen'), num('opens'), num('cf'), now,
	lreason, luntil,
	num('sin'), num('sout'), fmt(num('scost')), num('hin'), num('hout'), fmt(num('hcost')),
	capped, capWarned(),
	str('wstop'), num('bin'), num('bout'), fmt(num('bcost')),
	#windows,
}
for _, r in ipairs(windows) do
	for _, v in ipairs({ r.len, r.src, fmt(r.used), fmt(r.reset), fmt(r.untilMs) }) do reply[#reply + 1] = v end
end
if op == 'stats' then
	local extra = {
		num('opened'), num('cd'), num('copens'), num('tf'), num('it'), num('ni'),
		num('inrow'), str('lastfp'), num('evicted'), str('powner'),
		spent() and budgetRetry() or 0,
	}
	for _, v in ipairs(extra) do reply[#reply + 1] = v end
	local errs = redis.call('HGETALL', E)
	for i = 1, #errs, 2 do
		if string.sub(errs[i], 1, 1) ~= '@' then -- not a recency
			reply[#reply + 1] = errs[i]; reply[#reply + 1] = errs[i + 1]
		end
	end
end
return reply
