import MainLoop

/// Timer lateness on the real clock: `count` one-shot timers due 1 ms
/// apart; each records how late it fired (firing early would be negative).
enum TimerLateness {
    struct Result {
        let samples: Int
        let earliest: Double
        let p50: Double
        let p99: Double
        let worst: Double
    }

    static func measure(count: Int = 2000) throws -> Result {
        let loop = try MainRunLoop()
        var lateness: [Double] = []
        lateness.reserveCapacity(count)
        let start = loop.now
        for index in 1...count {
            let due = start + .milliseconds(index)
            loop.makeTimer {
                lateness.append(Double(LoopInstant.monotonicNow().nanoseconds - due.nanoseconds) / 1000)
                if lateness.count == count { loop.stop() }
            }.schedule(at: due)
        }
        try loop.run()
        let sorted = lateness.sorted()
        func percentile(_ p: Double) -> Double { sorted[min(sorted.count - 1, Int(Double(sorted.count) * p))] }
        return Result(samples: count, earliest: sorted.first!, p50: percentile(0.5), p99: percentile(0.99), worst: sorted.last!)
    }
}
