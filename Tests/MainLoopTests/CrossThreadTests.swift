import CLinux
import Dispatch
import Glibc
import MainLoop
import Synchronization
import Testing
import TestSupport

@Suite(.ownThread, .timeLimit(.minutes(2))) struct CrossThreadTests {
    /// 4 producer threads × 250,000 posts: each post runs exactly once, on
    /// the loop thread. Run under `swift test --sanitize=thread` in CI.
    @Test func everyPostFromEveryThreadRunsExactlyOnceOnTheLoopThread() throws {
        let producers = 4, postsPerProducer = 250_000
        let loop = try MainRunLoop()
        var seen = [[Bool]](repeating: [Bool](repeating: false, count: postsPerProducer), count: producers)
        var duplicates = 0, offThread = 0, total = 0
        var lastPerProducer = [Int](repeating: -1, count: producers)
        var outOfOrder = 0
        struct Item: Sendable { let producer: Int; let index: Int }
        let channel = try loop.makeChannel(of: Item.self) { item in
            if !loop.inLoop { offThread += 1 }
            if seen[item.producer][item.index] { duplicates += 1 }
            seen[item.producer][item.index] = true
            if item.index <= lastPerProducer[item.producer] { outOfOrder += 1 }
            lastPerProducer[item.producer] = item.index
            total += 1
            if total == producers * postsPerProducer { loop.stop() }
        }
        let threads = (0..<producers).map { producer in
            TestThread {
                for index in 0..<postsPerProducer { try! channel.post(Item(producer: producer, index: index)) }
            }
        }
        try loop.run()
        threads.forEach { $0.join() }
        #expect(total == producers * postsPerProducer)
        #expect(duplicates == 0)
        #expect(offThread == 0)
        #expect(outOfOrder == 0, "each producer's posts keep their order")
        #expect(seen.allSatisfy { $0.allSatisfy { $0 } })
    }

    @Test func closuresPostedFromOtherThreadsRunOnTheLoopThread() throws {
        let loop = try MainRunLoop()
        let count = Atomic<Int>(0)
        let wrongThread = Atomic<Int>(0)
        let threads = (0..<4).map { _ in
            TestThread {
                for _ in 0..<10_000 {
                    try! loop.execute {
                        if !loop.inLoop { wrongThread.add(1, ordering: .relaxed) }
                        if count.add(1, ordering: .relaxed).newValue == 40_000 { loop.stop() }
                    }
                }
            }
        }
        try loop.run()
        threads.forEach { $0.join() }
        #expect(count.load(ordering: .relaxed) == 40_000)
        #expect(wrongThread.load(ordering: .relaxed) == 0)
    }

    /// A stop from another thread, sent once the loop is running (waited
    /// for, not slept for): `run()` returns, no callback runs after it
    /// returned, and the request is consumed (the loop runs again).
    @Test func stopFromAnotherThreadEndsRun() throws {
        let loop = try MainRunLoop()
        let running = DispatchSemaphore(value: 0)
        let ticks = LockedValue(0)
        let timer = loop.scheduleTimer(after: .milliseconds(1), repeating: .milliseconds(1)) {
            if ticks.withLock({ $0 += 1; return $0 }) == 1 { running.signal() }
        }
        let stopper = TestThread {
            running.wait()
            loop.stop()
        }
        try loop.run()  // returns only because of the remote stop
        stopper.join()
        let ticksAtReturn = ticks.withLock { $0 }
        #expect(ticksAtReturn >= 1)
        usleep(20_000)  // the timer is due 20 times over, but the loop is not running
        #expect(ticks.withLock { $0 } == ticksAtReturn, "a callback ran after run() returned")
        loop.scheduleTimer(after: .milliseconds(5)) { loop.stop() }
        try loop.run()
        #expect(ticks.withLock { $0 } > ticksAtReturn, "the stop request was not consumed")
        timer.cancel()
    }

    /// `runOnce` changes the loop's phase twice per call while `stop()` may
    /// set its request from another thread at any moment: a stop that lands
    /// during a `runOnce` must be neither lost nor taken by it, so the next
    /// `run()` returns at once, every time.
    @Test func aStopRacingRunOnceIsKeptForTheNextRun() throws {
        let loop = try MainRunLoop()
        for _ in 0..<200 {
            let stopped = Atomic<Bool>(false)
            let stopper = TestThread {
                loop.stop()
                stopped.store(true, ordering: .releasing)
            }
            while !stopped.load(ordering: .acquiring) {
                try loop.executeInLoop {}
                try loop.runOnce()
            }
            stopper.join()
            var timedOut = false
            let guardTimer = loop.scheduleTimer(after: .seconds(5)) {
                timedOut = true
                loop.stop()
            }
            try loop.run()  // returns at once: the stop is still pending
            guardTimer.cancel()
            #expect(!timedOut, "a stop sent during runOnce was lost")
            if timedOut { break }
        }
    }

    /// `run()` stores its phase and then takes a pending request; `stop()`
    /// stores its request and then reads the phase. A stop racing with the
    /// start of `run()` is therefore either taken by the start (`run()`
    /// returns at once) or sees the loop running and wakes it: never lost,
    /// whichever comes first.
    @Test func aStopRacingTheStartOfRunIsNeverLost() throws {
        let loop = try MainRunLoop()
        for _ in 0..<300 {
            let stopper = TestThread { loop.stop() }
            var timedOut = false
            let guardTimer = loop.scheduleTimer(after: .seconds(5)) {
                timedOut = true
                loop.stop()
            }
            try loop.run()
            guardTimer.cancel()
            stopper.join()
            #expect(!timedOut, "a stop sent as run() started was lost")
            if timedOut { break }
        }
    }

    /// `inLoop` is true on the loop's thread only, and stays false on every
    /// other thread after the loop's own has ended: glibc gives a finished
    /// thread's `pthread_t` to the next thread it creates, and a loop that
    /// kept a `pthread_t` took 100 of 100 new threads for its own.
    @Test func aLoopsThreadIsNeverTakenForAnotherAfterItEnds() throws {
        let loop = try MainRunLoop()
        #expect(loop.inLoop)
        let inLoopElsewhere = Atomic<Bool>(true)
        TestThread { inLoopElsewhere.store(loop.inLoop, ordering: .relaxed) }.join()
        let elsewhere = inLoopElsewhere.load(ordering: .relaxed)
        #expect(!elsewhere)

        let thread = try LoopThread.start()
        let ended = thread.loop
        try thread.stopAndJoin()
        let mistaken = Atomic<Int>(0)
        for _ in 0..<100 {
            TestThread { if ended.inLoop { mistaken.add(1, ordering: .relaxed) } }.join()
        }
        let mistakenCount = mistaken.load(ordering: .relaxed)
        #expect(mistakenCount == 0, "new threads taken for the ended loop's thread")
    }

    @Test func loopThreadRunsAndJoins() throws {
        let thread = try LoopThread.start()
        let ran = Atomic<Bool>(false)
        let done = Atomic<Bool>(false)
        try thread.loop.execute {
            ran.store(thread.loop.inLoop, ordering: .relaxed)
            done.store(true, ordering: .releasing)
        }
        while !done.load(ordering: .acquiring) { usleep(1000) }
        try thread.stopAndJoin()
        let ranOnLoop = ran.load(ordering: .relaxed)
        #expect(ranOnLoop)
        #expect(thread.loop.isShutDown)
    }
}
