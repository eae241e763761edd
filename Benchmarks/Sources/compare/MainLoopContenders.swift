import AppLifecycle
import CRawLibevent
import EngineWire
import Glibc
import MainLoopJSON
import MainLoop
import SystemNotifications

/// MainLoop's shapes: the same work as the other contenders.
enum MainLoopContenders {
    static let batch = 4096

    /// In-loop post→run of a typed event: ring buffer append, one drain
    /// callback per batch, no allocation.
    static func inLoopTyped(events: Int) throws -> Double {
        let loop = try MainRunLoop()
        let counter = Counter()
        let channel = try loop.makeChannel(of: Int.self) { counter.value &+= $0 }
        for value in 0..<batch { try channel.post(value) }  // warm up the ring buffer
        try loop.runUntilIdle()
        return try nanosecondsPerEvent(events) {
            for _ in 0..<(events / batch) {
                for value in 0..<batch { try channel.post(value) }
                try loop.runUntilIdle()
            }
        }
    }

    /// In-loop post→run of a closure created per post (the capture
    /// context is one allocation per post).
    static func inLoopClosure(events: Int) throws -> Double {
        let loop = try MainRunLoop()
        let counter = Counter()
        return try nanosecondsPerEvent(events) {
            for _ in 0..<(events / batch) {
                for value in 0..<batch { try loop.executeInLoop { counter.value &+= value } }
                try loop.runUntilIdle()
            }
        }
    }

    /// Cross-thread post→run of typed events from `producers` threads.
    static func crossThreadTyped(events: Int, producers: Int) throws -> Double {
        let loop = try MainRunLoop()
        let counter = Counter()
        let channel = try loop.makeChannel(of: Int.self) { _ in
            counter.value += 1
            if counter.value == events { loop.stop() }
        }
        let perProducer = events / producers
        return try nanosecondsPerEvent(events) {
            let threads = (0..<producers).map { _ in
                ProducerThread { for value in 0..<perProducer { try! channel.post(value) } }
            }
            try loop.run()
            threads.forEach { $0.join() }
        }
    }

    /// Cross-thread `execute` of closures from one producer.
    static func crossThreadClosure(events: Int) throws -> Double {
        let loop = try MainRunLoop()
        let counter = Counter()
        return try nanosecondsPerEvent(events) {
            let producer = ProducerThread {
                for _ in 0..<events {
                    try! loop.execute {
                        counter.value += 1
                        if counter.value == events { loop.stop() }
                    }
                }
            }
            try loop.run()
            producer.join()
        }
    }

    /// A live system notification to `observers` observers (app active).
    static func liveNotification(events: Int, observers: Int) throws -> Double {
        let loop = try MainRunLoop()
        let application = try Application(loop: loop)
        let center = application.notifications
        let counter = Counter()
        for _ in 0..<observers { try center.addObserver(for: .orientation) { _ in counter.value &+= 1 } }
        try application.perform(.launch)
        return try postOrientations(events: events, center: center, loop: loop)
    }

    /// A live notification printed as `mainloop run` prints it: an
    /// `ObservationRecorder` writing text lines (one timestamp object, as
    /// within one millisecond), the line's bytes summed.
    static func observationLines(events: Int) throws -> Double {
        let loop = try MainRunLoop()
        let application = try Application(loop: loop)
        let stamp: JSONObject = ["at": .number(1_795_546_609.301), "time": .string("2026-11-24T18:56:49.301Z")]
        let counter = Counter()
        let recorder = ObservationRecorder(timestamp: { stamp }, lineSink: { counter.value &+= $0.count })
        try recorder.attach(to: application)
        try application.perform(.launch)
        let nanoseconds = try postOrientations(events: events, center: application.notifications, loop: loop)
        precondition(counter.value > 0)
        return nanoseconds
    }

    /// Holding while suspended: the coalesce cost per event.
    static func heldCoalesce(events: Int) throws -> Double {
        let loop = try MainRunLoop()
        let application = try Application(loop: loop)
        let center = application.notifications
        try application.perform(.launch)
        try application.perform(.home)
        precondition(application.state == .suspended)
        return try postOrientations(events: events, center: center, loop: loop)
    }

    /// Alternating orientations (each one a real change), in batches.
    private static func postOrientations(events: Int, center: SystemNotificationCenter, loop: MainRunLoop) throws -> Double {
        let faceUp = try center.prepare(.orientation(.faceUp)), faceDown = try center.prepare(.orientation(.faceDown))
        return try nanosecondsPerEvent(events) {
            for _ in 0..<(events / batch) {
                for index in 0..<batch { try center.post(index & 1 == 0 ? faceUp : faceDown) }
                try loop.runUntilIdle()
            }
        }
    }
}

extension MainLoopContenders {
    /// Timer schedule + cancel of one timer with `pending` others waiting
    /// (1 to 1000 s out), like the raw libevent row.
    static func timerScheduleCancel(pending: Int, operations: Int, clockReading: ClockReading = .continuous) throws -> Double {
        let loop = try MainRunLoop(clockReading: clockReading)
        var seed: UInt32 = 12345
        let waiting = (0..<pending).map { _ in
            seed = seed &* 1_103_515_245 &+ 12345
            return loop.scheduleTimer(after: .seconds(Int64(1 + seed % 1000)) + .microseconds(Int64(seed % 1_000_000))) {}
        }
        // A pass orders the pending timers into the loop's heap (insertion
        // is deferred until the order is read), as a running service's are.
        try loop.runUntilIdle()
        let timer = loop.makeTimer {}
        // The same delays as the C row, built outside the timed loop (C builds
        // a timeval for free; a Duration sum is Int128 arithmetic).
        let delays = (0..<1000).map { (index: Int) -> Duration in
            let seconds = Duration.seconds(Int64(1 + index % 1000))
            return seconds + .microseconds(Int64((index &* 7919) % 1_000_000))
        }
        let result = nanosecondsPerEvent(operations) {
            for index in 0..<operations {
                timer.schedule(after: delays[index % 1000])
                timer.cancel()
            }
        }
        for timer in waiting { timer.cancel() }
        return result
    }

    /// fd readiness dispatch, one ready of `fds` eventfds (syscalls included),
    /// like the raw libevent row.
    static func fdDispatch(fds: Int, active: Int = 1, rounds: Int, observed: Bool = false) throws -> Double {
        let bench = try MainLoopFdBench(fds: fds, observed: observed)
        let elapsed = try bench.run(rounds: rounds, active: active)
        try bench.close()
        return elapsed / Double(rounds * active)
    }

    /// Holding while suspended, keyed: accessory events cycling over
    /// `subjects` subjects (each one a real change).
    static func heldKeyed(events: Int, subjects: Int) throws -> Double {
        let loop = try MainRunLoop()
        var limits = CoalescingLimits()
        limits.maxSubjectsPerKind = max(limits.maxSubjectsPerKind, subjects)
        let application = try Application(loop: loop, limits: limits)
        let center = application.notifications
        try application.perform(.launch)
        try application.perform(.home)
        precondition(application.state == .suspended)
        let connect = try (0..<subjects).map { try center.prepare(.accessory(id: "accessory-\($0)", connected: true)) }
        let disconnect = try (0..<subjects).map { try center.prepare(.accessory(id: "accessory-\($0)", connected: false)) }
        return try nanosecondsPerEvent(events) {
            var index = 0
            for _ in 0..<(events / batch) {
                for _ in 0..<batch {
                    let subject = index % subjects
                    try center.post((index / subjects) & 1 == 0 ? connect[subject] : disconnect[subject])
                    index &+= 1
                }
                try loop.runUntilIdle()
            }
        }
    }

    /// A launched application that keeps up to `subjects` accessories, with
    /// one accessory observer counting what it is told.
    private static func launchedAccessoryApp(subjects: Int) throws -> (MainRunLoop, Application, Counter) {
        let loop = try MainRunLoop()
        var limits = CoalescingLimits()
        limits.maxSubjectsPerKind = max(limits.maxSubjectsPerKind, subjects)
        let application = try Application(loop: loop, limits: limits)
        let counter = Counter()
        try application.notifications.addObserver(for: .accessory) { _ in counter.value &+= 1 }
        try application.perform(.launch)
        return (loop, application, counter)
    }

    /// A resume flush of `subjects` held accessory subjects to 1 observer,
    /// in steady state (one application, suspended and resumed again and
    /// again, every subject changing each time): nanoseconds per delivered
    /// notification; only the foreground is timed.
    static func resumeFlush(subjects: Int, resumes: Int = 4) throws -> Double {
        let (_, application, counter) = try launchedAccessoryApp(subjects: subjects)
        let center = application.notifications
        let connect = try (0..<subjects).map { try center.prepare(.accessory(id: "accessory-\($0)", connected: true)) }
        let disconnect = try (0..<subjects).map { try center.prepare(.accessory(id: "accessory-\($0)", connected: false)) }
        var elapsed = 0.0
        for round in 0...resumes {
            try application.perform(.home)
            for event in round & 1 == 0 ? connect : disconnect { try center.post(event) }
            let time = try nanosecondsPerEvent(subjects) { try application.perform(.foreground) }
            if round > 0 { elapsed += time }  // round 0 warms up
        }
        precondition(counter.value == subjects * (resumes + 1), "the flush did not deliver every subject")
        return elapsed / Double(resumes)
    }

    /// `count` home→foreground cycles of a launched app with one observer
    /// (for profiling what a transition costs).
    static func lifecycleCycles(_ count: Int) throws -> Double {
        let loop = try MainRunLoop()
        let application = try Application(loop: loop)
        try application.notifications.addObserver { _ in }
        try application.perform(.launch)
        return try nanosecondsPerEvent(count) {
            for _ in 0..<count {
                try application.perform(.home)
                try application.perform(.foreground)
            }
        }
    }

    /// Resident memory (MiB, from /proc/self/statm) around holding and
    /// flushing `subjects` accessory subjects, three times: printed at each
    /// stage, with the time of the flush that brings every subject back to
    /// its default, and 5.2 s later, once the application gave the burst's
    /// storage back (`--probe-flush-memory 1000000`).
    static func flushMemory(subjects: Int) throws {
        func resident() -> Double {
            let fields = (try? String(contentsOfFile: "/proc/self/statm", encoding: .utf8))?.split(separator: " ") ?? []
            return fields.count > 1 ? Double(fields[1])! * 4096 / 1_048_576 : -1
        }
        let (loop, application, _) = try launchedAccessoryApp(subjects: subjects)
        let center = application.notifications
        print(String(format: "launched: %.1f MiB", resident()))
        for round in 0..<3 {
            try application.perform(.home)
            for index in 0..<subjects { try center.post(.accessory(id: "accessory-\(index)", connected: true)) }
            try loop.runUntilIdle()
            print(String(format: "round %d, %d subjects held: %.1f MiB", round, subjects, resident()))
            try application.perform(.foreground)
            try loop.runUntilIdle()
            print(String(format: "round %d, after the flush: %.1f MiB", round, resident()))
            try application.perform(.home)
            for index in 0..<subjects { try center.post(.accessory(id: "accessory-\(index)", connected: false)) }
            let start = nowNanoseconds()
            try application.perform(.foreground)
            let flush = (nowNanoseconds() - start) / 1e6
            try loop.runUntilIdle()
            print(String(format: "round %d, every subject back at its default and flushed (%.0f ms): %.1f MiB", round, flush, resident()))
            loop.scheduleTimer(after: .milliseconds(5_200)) { loop.stop() }  // the give-back comes 5 s after
            try loop.run()
            print(String(format: "round %d, 5.2 s later: %.1f MiB", round, resident()))
        }
    }
}
