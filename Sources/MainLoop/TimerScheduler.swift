import CLibevent
import CLinux
import Glibc

private let timerTrampoline: event_callback_fn = { _, _, context in
    let scheduler = Unmanaged<TimerScheduler>.fromOpaque(context!).takeUnretainedValue()
    scheduler.core.noteWake()
    scheduler.timerFDReadable()
}

private let yieldTrampoline: event_callback_fn = { _, _, context in
    let scheduler = Unmanaged<TimerScheduler>.fromOpaque(context!).takeUnretainedValue()
    scheduler.core.noteWake()
    scheduler.fireDueTimers()
}

/// The loop's timers: a ``TimerHeap`` of plain entries, the timer objects by
/// slot (held while scheduled, so a scheduled timer fires even if its owner
/// dropped it), and one `CLOCK_MONOTONIC` timerfd armed for the earliest
/// deadline, watched by libevent like any fd.
///
/// Why its own timerfd rather than a libevent timer: libevent's precise
/// timers (EVENT_BASE_FLAG_PRECISE_TIMER) call `timerfd_settime` on every
/// loop pass (the fd dispatch row of `compare`), and its coarse timers are
/// milliseconds late (the timer lateness `compare` prints). This timerfd takes an absolute
/// deadline (never early, to the nanosecond) and is re-armed only when the
/// earliest deadline moves earlier; when it moves later (the first timer was
/// cancelled), the fd stays armed and one wakeup finds nothing due and
/// re-arms, so schedule+cancel costs no system call in steady state.
///
/// Timers refer to the scheduler strongly (not to the loop, and not
/// `unowned`): scheduling or cancelling touches no weak or unowned
/// reference, and sifting moves plain values. The loop holds the scheduler,
/// the scheduler holds the loop's core, and the core holds neither, so there
/// is no cycle; a scheduled timer and the scheduler refer to each other only
/// until it fires, is cancelled, or the loop shuts down (``releaseAll()``).
/// Loop thread only; every field is `@exclusivity(unchecked)` (the
/// one-thread rule is the guarantee; the timer schedule+cancel row of
/// `compare`, probe `timer`).
final class TimerScheduler {
    let core: LoopCore
    /// The core's heap, held here too so the hot paths load it once.
    let heap: TimerHeap
    /// The scheduled timer of each slot, retained while scheduled (one
    /// explicit retain per schedule, released on cancel or fire), and the
    /// free slots: the scheduler's own memory, so a schedule+cancel does no
    /// array bookkeeping (uniqueness and bounds checks).
    @exclusivity(unchecked) private var timers: UnsafeMutablePointer<Unmanaged<LoopTimer>?>
    @exclusivity(unchecked) private var freeSlots: UnsafeMutablePointer<Int32>
    @exclusivity(unchecked) private var slotCapacity = 0
    @exclusivity(unchecked) private var freeCount = 0
    /// The timerfd (real clock) and its libevent event (nil once released).
    let timerFD: Int32
    @exclusivity(unchecked) private var timerEvent: OpaquePointer?
    /// The instant the timerfd is armed for, if armed (real clock).
    @exclusivity(unchecked) private var armedDeadline: Int64?
    /// Fairness: libevent runs only the highest-priority non-empty queue in
    /// a pass, so a timer that is due again at every pass (a repeat shorter
    /// than a pass, or a handler that takes longer than its interval) would
    /// starve input and app work for good. The loop's work counter when the
    /// last batch that fired something ended: if the next batch finds it
    /// unchanged (nothing else ran in between), it first yields one pass
    /// through ``yieldEvent``, a user event at the lowest priority, which
    /// runs after whatever input and app work is ready.
    @exclusivity(unchecked) private var workAtLastBatchEnd: UInt64?
    @exclusivity(unchecked) private var yieldEvent: OpaquePointer?

    /// Arms the timerfd for an absolute CLOCK_MONOTONIC instant; 0 on
    /// success (`timerfd_settime`). A seam for the fallback's test.
    var armTimerFD: (Int32, Int64) -> Int32 = { CLinux_arm_timerfd($0, $1) }
    /// How often arming the timerfd failed and libevent's timeout stood in.
    private(set) var armFailures = 0

    init(core: LoopCore) throws(MainLoopError) {
        self.core = core
        heap = core.timerHeap
        timers = PlainBuffer.allocate(Unmanaged<LoopTimer>?.self, capacity: 0)
        freeSlots = PlainBuffer.allocate(Int32.self, capacity: 0)
        guard let base = core.base else { throw .shutDown }
        timerFD = CLinux_monotonic_timerfd()
        guard timerFD >= 0 else { throw systemError("timerfd_create") }
        let context = Unmanaged.passUnretained(self).toOpaque()
        guard let event = CLibevent_fd_event_new(base, timerFD, 1, 0, 0, timerTrampoline, context),
              event_priority_set(event, Int32(LoopPriority.system.rawValue)) == 0, CLibevent_add(event) == 0
        else {
            let error = systemError("creating the loop's timer event")
            close(timerFD)
            throw error
        }
        timerEvent = event
        guard let yield = CLibevent_user_event_new(base, yieldTrampoline, context),
              event_priority_set(yield, Int32(LoopPriority.app.rawValue)) == 0
        else {
            let error = systemError("creating the loop's timer yield event")
            event_free(event)
            timerEvent = nil
            close(timerFD)
            throw error
        }
        yieldEvent = yield
    }

    deinit {
        releaseAll()
        PlainBuffer.free(timers)
        PlainBuffer.free(freeSlots)
    }

    /// The timerfd expired (or the manual clock activated it).
    func timerFDReadable() {
        var expirations: UInt64 = 0
        _ = read(timerFD, &expirations, 8)
        armedDeadline = nil
        if let yieldEvent, core.workCounter == workAtLastBatchEnd {
            // Two batches in a row with nothing else run between them:
            // whatever lower-priority work is ready runs first.
            workAtLastBatchEnd = nil
            event_active(yieldEvent, 0, 0)
            return
        }
        fireDueTimers()
    }

    /// The earliest deadline, if any.
    var nextDeadline: LoopInstant? { heap.first.map { LoopInstant(nanoseconds: $0.deadline) } }

    /// How many timers are scheduled.
    var count: Int { heap.count }

    /// Schedules `timer` (not scheduled yet) at its `deadline`. On a loop
    /// that is shut down nothing is scheduled (nothing would ever run).
    func schedule(_ timer: LoopTimer) {
        guard !core.isShutDown else { return }
        if freeCount == 0 { addSlots() }
        freeCount -= 1
        let slot = freeSlots[freeCount]
        timers[Int(slot)] = Unmanaged.passRetained(timer)
        timer.slot = slot
        let deadline = timer.deadline.nanoseconds
        heap.insert(slot: slot, deadline: deadline)
        // Only a deadline before the armed one re-arms; the test reads no
        // heap order, so the insertion stays deferred (TimerHeap).
        if deadline < armedDeadline ?? .max { rearm() }
    }

    /// Moves `timer` (scheduled) to its new `deadline`: a new entry in the
    /// heap (with a new sequence number, as a new schedule has), the same
    /// slot and the same retain.
    func move(_ timer: LoopTimer) {
        let deadline = timer.deadline.nanoseconds
        heap.remove(slot: timer.slot)
        heap.insert(slot: timer.slot, deadline: deadline)
        if deadline < armedDeadline ?? .max { rearm() }
    }

    /// Unschedules `timer` (scheduled). The timerfd stays armed: a wakeup
    /// that finds nothing due re-arms for what is left, and every path that
    /// leaves it unarmed (a timer batch, the manual clock) re-arms itself.
    func cancel(_ timer: LoopTimer) {
        let slot = timer.slot
        heap.remove(slot: slot)
        release(slot, of: timer)
    }

    /// Frees `slot` (the timer's), releasing the timer.
    private func release(_ slot: Int32, of timer: LoopTimer) {
        timers[Int(slot)]?.release()
        timers[Int(slot)] = nil
        freeSlots[freeCount] = slot
        freeCount += 1
        timer.slot = -1
    }

    /// Doubles the slot table; every new slot goes on the free list.
    private func addSlots() {
        let newCapacity = max(64, slotCapacity * 2)
        timers = PlainBuffer.resized(timers, to: newCapacity)
        (timers + slotCapacity).initialize(repeating: nil, count: newCapacity - slotCapacity)
        freeSlots = PlainBuffer.resized(freeSlots, to: newCapacity)
        // Highest first, so slots are handed out from 0 up.
        for slot in (slotCapacity..<newCapacity).reversed() {
            (freeSlots + freeCount).initialize(to: Int32(slot))
            freeCount += 1
        }
        slotCapacity = newCapacity
    }

    /// Runs every timer whose deadline is not after now, in heap order.
    func fireDueTimers() {
        // The real clock decides what is due (a per-callback clock was held
        // back before the earliest due timer); the manual one on a replay.
        let current = core.clockReading
        let workBefore = core.workCounter
        defer {
            // Only on the real clock: the manual clock runs due timers
            // through activateIfDue, never starving what a test steps.
            if !core.isDeterministic, core.workCounter != workBefore { workAtLastBatchEnd = core.workCounter }
        }
        if core.readsClockPerCallback, let first = heap.first, first.deadline > core.manualNow.nanoseconds,
           core.hasActiveDrains, let yieldEvent {
            // Work made ready at the loop's instant runs before a timer of a
            // later instant (the yield event queues behind it), as a
            // replay runs a step's work before it advances the clock.
            event_active(yieldEvent, 0, 0)
            return
        }
        var batchDeadline: Int64?
        while let first = heap.first, first.deadline <= current.nanoseconds {
            if core.readsClockPerCallback {
                // One deadline a batch: what the timers of one instant made
                // ready runs before the next instant's timers (the yield
                // event, at app priority, queues behind it), as a replay's
                // `advance` runs it, and at that instant.
                if let batchDeadline, first.deadline != batchDeadline, let yieldEvent {
                    event_active(yieldEvent, 0, 0)
                    break
                }
                batchDeadline = first.deadline
            }
            heap.remove(slot: first.slot)
            // The scheduler's retain moves into `timer` for the handler's run.
            guard let timer = timers[Int(first.slot)]?.takeRetainedValue() else { continue }
            timers[Int(first.slot)] = nil
            freeSlots[freeCount] = first.slot
            freeCount += 1
            timer.slot = -1
            core.workCounter &+= 1
            var firedAt = current
            if core.readsClockPerCallback {
                core.enterTimerCallback(deadline: first.deadline)
                firedAt = core.manualNow
            }
            if let monitor = core.monitor {
                monitor.measure(.timer, .system, deadline: core.isDeterministic ? nil : first.deadline) {
                    timer.fire(now: firedAt)
                }
            } else {
                timer.fire(now: firedAt)
            }
            if core.isShutDown { return }
        }
        rearm()
    }

    /// Arms the timerfd for the earliest deadline when that is earlier than
    /// what it is armed for (real clock only; on the manual clock
    /// ``activateIfDue()`` runs due timers). A later earliest deadline waits
    /// for the armed wakeup, which finds nothing due and re-arms.
    ///
    /// Inlined: with no timer scheduled (most fd dispatches), a pass pays
    /// one load and compare; as an outlined call with a stack-protected
    /// frame, the two empty checks were 51 of an fd dispatch's 878
    /// instructions (`PROBES=fd bash scripts/instructions.sh`).
    @inline(__always)
    func rearm() {
        if !heap.isEmpty { rearmForEarliest() }
    }

    @inline(never)
    private func rearmForEarliest() {
        guard !core.isDeterministic, let timerEvent, let deadline = heap.first?.deadline else { return }
        if let armed = armedDeadline, armed <= deadline { return }
        armedDeadline = deadline
        // A deadline at or before 0 would disarm; the clock is far past it.
        guard armTimerFD(timerFD, max(deadline, 1)) != 0 else { return }
        // The kernel refused to arm the timerfd (it does not for these
        // values; a seccomp filter or a descriptor closed by mistake could).
        // The timers must still fire: libevent's own timeout on the same
        // event wakes the loop instead, rounded up to the microsecond so it
        // is never early (fireDueTimers fires only what is due, and re-arms).
        armFailures &+= 1
        let delay = max(0, deadline - core.clockReading.nanoseconds)
        var timeout = timeval(tv_sec: Int(delay / 1_000_000_000), tv_usec: Int((delay % 1_000_000_000) / 1000) + 1)
        event_add(timerEvent, &timeout)
    }

    /// Hands due timers to libevent's dispatch (on the manual clock this is
    /// the only way they run; on the real clock it saves a poll round).
    /// Inlined, like ``rearm()``: no timer scheduled costs one compare.
    @inline(__always)
    func activateIfDue() {
        if !heap.isEmpty { activateEarliestIfDue() }
    }

    @inline(never)
    private func activateEarliestIfDue() {
        guard let timerEvent, let deadline = heap.first?.deadline, deadline <= core.clockReading.nanoseconds else { return }
        event_active(timerEvent, 0, 0)
    }

    /// Unschedules everything, frees the libevent timer and drops the
    /// core's reference to the scheduler (loop shutdown).
    func releaseAll() {
        for entry in heap.entries {
            guard let timer = timers[Int(entry.slot)] else { continue }
            timer.takeUnretainedValue().slot = -1
            timer.release()
            timers[Int(entry.slot)] = nil
            freeSlots[freeCount] = entry.slot
            freeCount += 1
        }
        heap.removeAll()
        if let timerEvent {
            event_free(timerEvent)
            close(timerFD)
        }
        if let yieldEvent { event_free(yieldEvent) }
        timerEvent = nil
        yieldEvent = nil
        if core.scheduler === self { core.scheduler = nil }
    }
}
