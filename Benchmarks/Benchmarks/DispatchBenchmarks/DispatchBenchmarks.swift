import AppLifecycle
import Benchmark
import Dispatch
import Glibc
import MainLoop
import ServiceKit
import SystemNotifications

// The hot paths of MainLoop. Each benchmark builds its loop outside the
// measured region and warms it up, so what is measured is steady state.
// One iteration is one unit of work (one post, one batch, one fire, ...);
// mallocCountTotal per iteration is gated at 0 for the steady-state paths
// (Thresholds/), wall clock and throughput are reported, not gated.

/// A counter the handlers bump (loop thread only).
final class Counter: @unchecked Sendable { var value = 0 }

let steadyState: [BenchmarkMetric] = [.wallClock, .throughput, .mallocCountTotal]

/// One byte written to a pipe and dispatched by `runOnce`, per iteration;
/// `observed`: with an observer of every pass activity installed.
func pipeDispatch(_ benchmark: Benchmark, observed: Bool) throws {
    let loop = try MainRunLoop()
    var fds: [Int32] = [0, 0]
    precondition(pipe(&fds) == 0)
    defer { close(fds[0]); close(fds[1]) }
    var byte: UInt8 = 1
    let counter = Counter()
    let observer = observed ? try loop.addObserver(activities: .all) { _ in counter.value &+= 1 } : nil
    let source = try loop.addFileDescriptor(fds[0], interest: .read) { _ in
        var sink: UInt8 = 0
        _ = read(fds[0], &sink, 1)
        counter.value &+= 1
    }
    benchmark.startMeasurement()
    for _ in benchmark.scaledIterations {
        _ = write(fds[1], &byte, 1)
        try loop.runOnce()
    }
    benchmark.stopMeasurement()
    try source.remove()
    try observer?.remove()
    blackHole(counter.value)
}

/// `ready` of `pipes` pipes written, spread over them, then `runOnce`
/// until each was read, per iteration (libevent's bench.c shape).
func manyPipesDispatch(_ benchmark: Benchmark, pipes: Int, ready: Int) throws {
    let loop = try MainRunLoop()
    var ends: [(read: Int32, write: Int32)] = []
    defer { for end in ends { close(end.read); close(end.write) } }
    let counter = Counter()
    var sources: [FileDescriptorSource] = []
    for _ in 0..<pipes {
        var fds: [Int32] = [0, 0]
        precondition(pipe(&fds) == 0)
        ends.append((fds[0], fds[1]))
        let fd = fds[0]
        sources.append(try loop.addFileDescriptor(fd, interest: .read) { _ in
            var sink: UInt8 = 0
            _ = read(fd, &sink, 1)
            counter.value &+= 1
        })
    }
    var byte: UInt8 = 1, next = 0
    let spacing = pipes / ready
    func round() throws {
        for k in 0..<ready { _ = write(ends[(next + k * spacing) % pipes].write, &byte, 1) }
        next = (next + 1) % pipes
        let expected = counter.value + ready
        while counter.value < expected { try loop.runOnce() }
    }
    // libevent grows its epoll result array (32 at first) the first time
    // more descriptors are ready than it holds: not steady state.
    try round()
    benchmark.startMeasurement()
    for _ in benchmark.scaledIterations { try round() }
    benchmark.stopMeasurement()
    for source in sources { try source.remove() }
}

let benchmarks: @Sendable () -> Void = {
    Benchmark.defaultConfiguration = .init(
        metrics: steadyState,
        warmupIterations: 10,
        scalingFactor: .one,
        maxDuration: .seconds(2),
        maxIterations: 100_000
    )

    // MARK: post→run on the loop thread

    for batch in [1, 64, 4096] {
        Benchmark("post→run typed event, batch \(batch)") { benchmark in
            let loop = try MainRunLoop()
            let counter = Counter()
            let channel = try loop.makeChannel(of: Int.self) { counter.value &+= $0 }
            for value in 0..<batch { try channel.post(value) }
            try loop.runUntilIdle()
            benchmark.startMeasurement()
            for _ in benchmark.scaledIterations {
                for value in 0..<batch { try channel.post(value) }
                try loop.runUntilIdle()
            }
            benchmark.stopMeasurement()
            blackHole(counter.value)
        }

        Benchmark("post→run closure, batch \(batch)") { benchmark in
            let loop = try MainRunLoop()
            let counter = Counter()
            let work = { counter.value &+= 1 }  // one closure, posted many times
            for _ in 0..<batch { try loop.executeInLoop(work) }  // grow the ring outside the measurement
            try loop.runUntilIdle()
            benchmark.startMeasurement()
            for _ in benchmark.scaledIterations {
                for _ in 0..<batch { try loop.executeInLoop(work) }
                try loop.runUntilIdle()
            }
            benchmark.stopMeasurement()
            blackHole(counter.value)
        }
    }

    // One new capturing closure per post: one allocation per post (its
    // context) and nothing more; the gate catches any extra.
    Benchmark("post→run new capturing closure per post, batch 64") { benchmark in
        let loop = try MainRunLoop()
        let counter = Counter()
        for value in 0..<64 { try loop.executeInLoop { counter.value &+= value } }
        try loop.runUntilIdle()
        benchmark.startMeasurement()
        for iteration in benchmark.scaledIterations {
            for value in 0..<64 { try loop.executeInLoop { counter.value &+= value &+ iteration } }
            try loop.runUntilIdle()
        }
        benchmark.stopMeasurement()
        blackHole(counter.value)
    }

    // MARK: cross-thread post→run

    for producers in [1, 4] {
        Benchmark("cross-thread post→run typed, \(producers) producer(s), 4096 per iteration",
                  configuration: .init(metrics: [.wallClock, .throughput], maxIterations: 2_000)) { benchmark in
            let loop = try MainRunLoop()
            let counter = Counter()
            let perIteration = 4096
            var target = 0
            let channel = try loop.makeChannel(of: Int.self) { _ in
                counter.value += 1
                if counter.value == target { loop.stop() }
            }
            benchmark.startMeasurement()
            for _ in benchmark.scaledIterations {
                target += perIteration
                let group = DispatchGroup()
                for _ in 0..<producers {
                    DispatchQueue.global().async(group: group) {
                        for value in 0..<(perIteration / producers) { try! channel.post(value) }
                    }
                }
                try loop.run()
                group.wait()
            }
            benchmark.stopMeasurement()
        }
    }

    // MARK: timers

    Benchmark("timer schedule→fire (manual clock)") { benchmark in
        let loop = try MainRunLoop(deterministic: true)
        let counter = Counter()
        let timer = loop.makeTimer { counter.value &+= 1 }
        timer.schedule(after: .nanoseconds(1))
        try loop.advance(by: .nanoseconds(1))
        benchmark.startMeasurement()
        for _ in benchmark.scaledIterations {
            timer.schedule(after: .nanoseconds(1))
            try loop.advance(by: .nanoseconds(1))
        }
        benchmark.stopMeasurement()
        blackHole(counter.value)
    }

    Benchmark("timer schedule→cancel") { benchmark in
        let loop = try MainRunLoop()
        let timer = loop.makeTimer {}
        let delay = Duration.seconds(10)
        timer.schedule(after: delay)
        timer.cancel()
        benchmark.startMeasurement()
        for _ in benchmark.scaledIterations {
            timer.schedule(after: delay)
            timer.cancel()
        }
        benchmark.stopMeasurement()
    }

    Benchmark("timer schedule→cancel, 10000 pending") { benchmark in
        let loop = try MainRunLoop()
        let waiting = (0..<10_000).map { loop.scheduleTimer(after: .seconds(1 + $0 % 1000)) {} }
        try loop.runUntilIdle()   // the pending timers join the heap, as in a running loop
        let timer = loop.makeTimer {}
        let delays = (0..<1000).map { Duration.seconds(1 + $0) + .microseconds($0 * 7919 % 1_000_000) }
        timer.schedule(after: delays[0])
        timer.cancel()
        benchmark.startMeasurement()
        for iteration in benchmark.scaledIterations {
            timer.schedule(after: delays[iteration % 1000])
            timer.cancel()
        }
        benchmark.stopMeasurement()
        for timer in waiting { timer.cancel() }
    }

    // MARK: fd readiness

    Benchmark("fd readiness dispatch on a pipe") { benchmark in
        try pipeDispatch(benchmark, observed: false)
    }

    Benchmark("fd readiness dispatch, 100 ready of 1000 pipes") { benchmark in
        try manyPipesDispatch(benchmark, pipes: 1000, ready: 100)
    }

    // MARK: around a pass, idle work, path events

    Benchmark("idle pass, one idle handler") { benchmark in
        let loop = try MainRunLoop()
        let counter = Counter()
        let idle = try loop.addIdle { counter.value &+= 1 }
        try loop.runUntilIdle()
        benchmark.startMeasurement()
        for _ in benchmark.scaledIterations { try loop.runUntilIdle() }
        benchmark.stopMeasurement()
        try idle.remove()
        blackHole(counter.value)
    }

    Benchmark("fd readiness dispatch on a pipe, an observer of every activity") { benchmark in
        try pipeDispatch(benchmark, observed: true)
    }

    Benchmark("path event: a watched file rewritten") { benchmark in
        let loop = try MainRunLoop()
        var template = Array("/tmp/mainloop-bench-XXXXXX".utf8CString)
        let directory = String(cString: mkdtemp(&template)!)
        let file = directory + "/state"
        defer { unlink(file); rmdir(directory) }
        let counter = Counter()
        let source = try loop.addPath(file, events: .modified) { _ in counter.value &+= 1 }
        let fd = open(file, O_WRONLY | O_CREAT | O_CLOEXEC, 0o644)
        defer { close(fd) }
        var byte: UInt8 = 1
        // One write is one IN_MODIFY: wait for its delivery each time.
        func rewrite() throws {
            let before = counter.value
            _ = pwrite(fd, &byte, 1, 0)
            while counter.value == before { try loop.runOnce() }
        }
        for _ in 0..<10 { try rewrite() }
        benchmark.startMeasurement()
        for _ in benchmark.scaledIterations { try rewrite() }
        benchmark.stopMeasurement()
        try source.remove()
    }

    // MARK: notifications

    for observers in [1, 16] {
        Benchmark("live notification post, \(observers) observer(s), batch 4096") { benchmark in
            let (loop, application, center) = try makeCenter()
            let counter = Counter()
            for _ in 0..<observers { try center.addObserver(for: .orientation) { _ in counter.value &+= 1 } }
            try application.perform(.launch)
            try postOrientations(center: center, loop: loop, count: 4096)
            benchmark.startMeasurement()
            for _ in benchmark.scaledIterations { try postOrientations(center: center, loop: loop, count: 4096) }
            benchmark.stopMeasurement()
            blackHole(counter.value)
        }
    }

    for held in [1_000, 1_000_000, 10_000_000] {
        Benchmark("holding while suspended, \(held) events per iteration",
                  configuration: .init(metrics: [.wallClock, .throughput, .mallocCountTotal],
                                       warmupIterations: 0, maxDuration: .seconds(5),
                                       maxIterations: held >= 1_000_000 ? 5 : 2_000)) { benchmark in
            let (loop, application, center) = try makeCenter()
            try application.perform(.launch)
            try application.perform(.home)
            try postOrientations(center: center, loop: loop, count: 4096)
            benchmark.startMeasurement()
            for _ in benchmark.scaledIterations {
                var remaining = held
                while remaining > 0 {
                    let count = min(remaining, 4096)
                    try postOrientations(center: center, loop: loop, count: count)
                    remaining -= count
                }
            }
            benchmark.stopMeasurement()
        }
    }

    for subjects in [1000, 100_000] {
        Benchmark("holding while suspended, keyed, \(subjects) subjects, 4096 events per iteration") { benchmark in
            let (loop, application, center) = try makeCenter(subjects: subjects)
            try application.perform(.launch)
            try application.perform(.home)
            let (connect, disconnect) = try accessoryEvents(center: center, count: subjects)
            var index = 0
            func post4096() throws {
                for _ in 0..<4096 {
                    let subject = index % subjects
                    try center.post((index / subjects) & 1 == 0 ? connect[subject] : disconnect[subject])
                    index &+= 1
                }
                try loop.runUntilIdle()
            }
            // Warm up: every subject stored and held once.
            for _ in 0...(subjects / 4096) { try post4096() }
            benchmark.startMeasurement()
            for _ in benchmark.scaledIterations { try post4096() }
            benchmark.stopMeasurement()
        }
    }

    Benchmark("resume flush of 10000 accessory subjects",
              configuration: .init(metrics: [.wallClock, .throughput, .mallocCountTotal], maxIterations: 2_000)) { benchmark in
        let (loop, application, center) = try makeCenter(subjects: 10_000)
        let counter = Counter()
        try center.addObserver(for: .accessory) { _ in counter.value &+= 1 }
        try application.perform(.launch)
        let (connect, disconnect) = try accessoryEvents(center: center, count: 10_000)
        var flip = false
        for _ in 0..<2 {  // warm up: the flush's storage at its size
            try application.perform(.home)
            flip.toggle()
            for event in flip ? connect : disconnect { try center.post(event) }
            try application.perform(.foreground)
        }
        for _ in benchmark.scaledIterations {
            try application.perform(.home)
            flip.toggle()
            for event in flip ? connect : disconnect { try center.post(event) }
            try loop.runUntilIdle()
            benchmark.startMeasurement()
            try application.perform(.foreground)
            benchmark.stopMeasurement()
        }
        blackHole(counter.value)
    }

    Benchmark("resume flush of all standard kinds",
              configuration: .init(metrics: [.wallClock, .throughput, .mallocCountTotal], maxIterations: 20_000)) { benchmark in
        let (loop, application, center) = try makeCenter()
        try center.addObserver { blackHole($0.merged) }
        try application.perform(.launch)
        var flip = false
        for _ in benchmark.scaledIterations {
            try application.perform(.home)
            flip.toggle()
            for event in allKinds(flip) { try center.post(event) }
            try loop.runUntilIdle()
            benchmark.startMeasurement()
            try application.perform(.foreground)
            benchmark.stopMeasurement()
        }
    }

    // A callback under the real-clock watchdog (didEnterBackground's, a
    // keep-alive handler's): arming and disarming allocate nothing, and a
    // watch that ended leaves nothing armed on another thread to allocate
    // later, inside some other measurement.
    Benchmark("watched callback on the real clock",
              configuration: .init(metrics: [.wallClock, .throughput, .mallocCountTotal], maxIterations: 10_000)) { benchmark in
        let loop = try MainRunLoop()
        let counter = Counter()
        blackHole(loop.runWatched(limit: .seconds(5)) { counter.value &+= 1 })  // starts the watchdog
        benchmark.startMeasurement()
        for _ in benchmark.scaledIterations {
            blackHole(loop.runWatched(limit: .seconds(5)) { counter.value &+= 1 })
        }
        benchmark.stopMeasurement()
    }

    // A control-socket event line answered from its bytes (the line
    // shortcut `mainloop run`'s server takes for each plain `system`
    // line): read, posted live and answered, two orientations in turn so
    // each is a change. Allocates nothing: no JSON tree, and the reader
    // keeps each orientation's prepared event after the first.
    Benchmark("control event line answered from its bytes",
              configuration: .init(metrics: [.wallClock, .throughput, .mallocCountTotal], maxIterations: 100_000)) { benchmark in
        let (_, application, _) = try makeCenter()
        try application.perform(.launch)
        let responder = ControlResponder(application: application)
        let lines = [Array(#"{"system":{"orientation":"faceUp"}}"#.utf8), Array(#"{"system":{"orientation":"portrait"}}"#.utf8)]
        for line in lines { blackHole(line.withUnsafeBufferPointer { responder.answer(line: $0) }) }
        benchmark.startMeasurement()
        for iteration in benchmark.scaledIterations {
            blackHole(lines[iteration & 1].withUnsafeBufferPointer { responder.answer(line: $0) })
        }
        benchmark.stopMeasurement()
    }

    Benchmark("lifecycle cycle home→suspended→foreground",
              configuration: .init(metrics: [.wallClock, .throughput, .mallocCountTotal])) { benchmark in
        let (_, application, _) = try makeCenter()
        try application.perform(.launch)
        // One cycle first: the loop's first timer sizes its slot table (two
        // allocations), and the harness runs this closure, setup and all,
        // once per sample.
        try application.perform(.home)
        try application.perform(.foreground)
        benchmark.startMeasurement()
        for _ in benchmark.scaledIterations {
            try application.perform(.home)
            try application.perform(.foreground)
        }
        benchmark.stopMeasurement()
    }
}

/// A loop, an application (keeping up to `subjects` subjects per keyed
/// kind) and its notification center.
func makeCenter(subjects: Int = CoalescingLimits().maxSubjectsPerKind) throws -> (MainRunLoop, Application, SystemNotificationCenter) {
    let loop = try MainRunLoop()
    var limits = CoalescingLimits()
    limits.maxSubjectsPerKind = max(limits.maxSubjectsPerKind, subjects)
    let application = try Application(loop: loop, limits: limits)
    return (loop, application, application.notifications)
}

/// Prepared connect and disconnect events of `count` accessories.
func accessoryEvents(center: SystemNotificationCenter, count: Int) throws -> ([PreparedEvent], [PreparedEvent]) {
    let connect = try (0..<count).map { try center.prepare(.accessory(id: "accessory-\($0)", connected: true)) }
    let disconnect = try (0..<count).map { try center.prepare(.accessory(id: "accessory-\($0)", connected: false)) }
    return (connect, disconnect)
}

let faceUp = SystemEvent.orientation(.faceUp), faceDown = SystemEvent.orientation(.faceDown)

/// `count` alternating orientations (each a real change), then run them.
func postOrientations(center: SystemNotificationCenter, loop: MainRunLoop, count: Int) throws {
    for index in 0..<count { try center.post(index & 1 == 0 ? faceUp : faceDown) }
    try loop.runUntilIdle()
}

/// One change of every standard kind (values alternate with `flip`).
func allKinds(_ flip: Bool) -> [SystemEvent] {
    [.orientation(flip ? .faceUp : .faceDown), .locale(flip ? "fr_FR" : "de_DE"),
     .userDefault(key: "k", value: flip ? 1 : 2), .significantTimeChange(.midnight),
     .batteryLevel(flip ? 0.5 : 0.25), .batteryState(flip ? .charging : .full), .proximity(flip),
     .protectedData(available: !flip), .accessory(id: "dock", connected: flip), .screen(id: "ext", connected: flip),
     .screenMode(screen: "ext", mode: flip ? "4k" : "1080p"), .ubiquityIdentity(flip ? "t" : nil)]
}
