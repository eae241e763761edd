import CLinux
import Glibc
@testable import MainLoop
import Testing
import TestSupport

/// What a timer holds: its heap footprint (a million timers are a million
/// of these), the repeat interval it keeps, and the loop's timer state
/// going away with the loop now that the core holds its scheduler strongly.
@Suite(.ownThread, .timeLimit(.minutes(1))) struct TimerFootprintTests {
    /// A timer kept a `Duration?` interval and its rate-limit window inline:
    /// 121 bytes, a 144-byte heap chunk. Now 72, an 80-byte one. Read from
    /// the class metadata, not from `malloc_usable_size`: malloc may hand
    /// out a free chunk larger than the request (a 96-byte one, 88 usable,
    /// when it splits a free chunk whose rest would be too small to keep).
    @Test func aTimerWithoutARateLimitTakesAnEightyByteHeapChunk() throws {
        let size = instanceSize(of: LoopTimer.self)
        #expect(size <= 72)
        // The reading is the allocation's: more than an object's 16-byte
        // header, and no more than malloc gave.
        #expect(size > 16)
        let loop = try MainRunLoop()
        let timer = loop.makeTimer {}
        #expect(malloc_usable_size(Unmanaged.passUnretained(timer).toOpaque()) >= size)
        try loop.shutdown()
    }

    /// The bytes an instance of `type` asks the allocator for: the 32-bit
    /// instance size in its class metadata, after the isa and superclass
    /// words, the flags and the instance address point (Swift's class
    /// metadata without Objective-C interop, as on Linux).
    private func instanceSize(of type: AnyClass) -> Int {
        Int(unsafeBitCast(type, to: UnsafeRawPointer.self).load(fromByteOffset: 24, as: UInt32.self))
    }

    @Test func aRepeatIntervalIsKeptToTheNanosecond() throws {
        let loop = try MainRunLoop()
        let timer = loop.makeTimer {}
        #expect(timer.interval == nil)
        timer.schedule(after: .seconds(60), repeating: .milliseconds(250))
        #expect(timer.interval == .milliseconds(250))
        // Below the clock's resolution an interval is one nanosecond.
        timer.schedule(after: .seconds(60), repeating: .zero)
        #expect(timer.interval == .nanoseconds(1))
        timer.schedule(after: .seconds(60), repeating: .nanoseconds(1) + .nanoseconds(1) / 2)
        #expect(timer.interval == .nanoseconds(1))
        timer.schedule(after: .seconds(60))
        #expect(timer.interval == nil)
        try loop.shutdown()
    }

    @Test func aRateLimitedTimerKeepsItsLimit() throws {
        let loop = try MainRunLoop()
        let timer = loop.makeTimer {}
        let limit = try RateLimit(interval: .seconds(1), burst: 3)
        timer.setRateLimit(limit)
        #expect(timer.rateLimit == limit)
        timer.setRateLimit(nil)
        #expect(timer.rateLimit == nil)
        try loop.shutdown()
    }

    /// The core refers to the scheduler strongly (a weak reference sent
    /// every retain of the scheduler down the runtime's slow path); the
    /// scheduler refers to the core. Releasing the loop breaks that cycle,
    /// even with a timer still scheduled and still held.
    @Test func aReleasedLoopFreesItsSchedulerAndCoreWhileATimerIsHeld() throws {
        weak var scheduler: TimerScheduler?
        weak var core: LoopCore?
        var held: LoopTimer?
        do {
            let loop = try MainRunLoop()
            scheduler = loop.timers
            core = loop.core
            held = loop.scheduleTimer(after: .seconds(60)) {}
        }
        #expect(held?.isScheduled == false, "the loop's release unscheduled it")
        #expect(core?.scheduler == nil, "the core let go of the scheduler")
        held = nil
        #expect(scheduler == nil)
        #expect(core == nil)
    }
}
