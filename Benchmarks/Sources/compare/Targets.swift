/// A performance target of the notification engine, checked as a
/// ratio of two rows of one `compare` run: because the contenders run
/// interleaved, the two rows' samples of one round were taken side by side,
/// so the ratio is computed per round and reported as the median of those
/// paired ratios with its spread. (The typed post→run baseline is bimodal on
/// this VM, 5.5–6 ns or 8.5–9 ns, so a ratio of two medians would depend on
/// which mode each row's median fell in.)
struct Target {
    /// What the target says, e.g. "live, 1 observer ≤ 3× typed post→run".
    let title: String
    /// The row whose cost is compared.
    let row: String
    /// The row it is compared with; nil for an absolute bound in ns.
    let baseline: String?
    /// The bound on `row / baseline` (or on `row` in ns).
    let limit: Double
    /// True when the ratio must be at least `limit` (a peer that must be slower).
    let atLeast: Bool
    /// More baselines: the ratio of each round is to the fastest of them
    /// and `baseline` in that round ("≤ 1× the fastest C loop").
    var otherBaselines: [String] = []

    /// Every target, by the rows' names.
    static func all(typed: String) -> [Target] {
        let live = "MainLoop live notification, 1 observer", held = "MainLoop held coalesce while suspended"
        return [
            Target(title: "live, 1 observer ≤ 2.5× typed post→run", row: live, baseline: typed, limit: 2.5, atLeast: false),
            Target(title: "Foundation NotificationCenter.post ≥ 20× live, 1 observer",
                   row: "Foundation NotificationCenter.post, 1 observer", baseline: live, limit: 20, atLeast: true),
            Target(title: "held coalesce ≤ 3× typed post→run", row: held, baseline: typed, limit: 3, atLeast: false),
            Target(title: "Foundation NotificationQueue.enqueue coalescing ≥ 40× held coalesce",
                   row: "Foundation NotificationQueue.enqueue, coalescing", baseline: held, limit: 40, atLeast: true),
            Target(title: "held keyed, 1000 subjects ≤ 5× typed post→run",
                   row: "MainLoop held coalesce, keyed, 1000 subjects", baseline: typed, limit: 5, atLeast: false),
            Target(title: "held keyed flat: 100000 subjects ≤ 1.5× 10 subjects",
                   row: "MainLoop held coalesce, keyed, 100000 subjects",
                   baseline: "MainLoop held coalesce, keyed, 10 subjects", limit: 1.5, atLeast: false),
            Target(title: "live, 16 observers ≤ 15× typed post→run",
                   row: "MainLoop live notification, 16 observers", baseline: typed, limit: 15, atLeast: false),
            Target(title: "resume flush ≤ 60 ns per notification (10^5 subjects)",
                   row: "MainLoop resume flush, 100000 held subjects (per notification)", baseline: nil, limit: 60, atLeast: false),
            Target(title: "timer schedule+cancel ≤ 1.5× raw libevent",
                   row: "MainLoop timer schedule+cancel, 10000 pending",
                   baseline: "raw libevent timer schedule+cancel, 10000 pending", limit: 1.5, atLeast: false),
            Target(title: "fd readiness dispatch ≤ 1.05× raw libevent",
                   row: "MainLoop fd readiness dispatch, 1 ready of 1000",
                   baseline: "raw libevent fd readiness dispatch, 1 ready of 1000", limit: 1.05, atLeast: false),
        ] + nio + wake + scaling + loopSources
    }

    /// Timers, fd dispatch, idle work and child processes beside the C
    /// loops that have them.
    static let loopSources: [Target] = {
        let idle = LoopSourceContenders.idleOperation, child = LoopSourceContenders.childOperation
        let timer = LoopSourceContenders.timerOperation
        return [
            Target(title: "\(timer) ≤ 1× the fastest of raw libevent, libuv, GLib, sd-event", row: "MainLoop \(timer)",
                   baseline: "raw libevent \(timer)", limit: 1, atLeast: false,
                   otherBaselines: ["libuv \(timer)", "GLib \(timer)", "sd-event \(timer)"]),
            Target(title: "\(timer) ≤ 1× raw libevent on the precise clock", row: "MainLoop \(timer)",
                   baseline: "raw libevent \(timer), precise clock", limit: 1, atLeast: false),
            // A per-callback clock counts from the callback's instant, as
            // libuv, GLib and sd-event count from their iteration's time.
            Target(title: "\(timer), per-callback clock ≤ 1× the fastest of raw libevent, libuv, GLib, sd-event",
                   row: "MainLoop \(timer), per-callback clock", baseline: "raw libevent \(timer)", limit: 1, atLeast: false,
                   otherBaselines: ["libuv \(timer)", "GLib \(timer)", "sd-event \(timer)"]),
            Target(title: "in-loop post→run, typed channel ≤ 1× the fastest of raw libevent, GLib, sd-event",
                   row: "MainLoop in-loop post→run, typed channel", baseline: "raw libevent event_active→callback (no evthread)",
                   limit: 1, atLeast: false, otherBaselines: ["GLib in-loop post→run", "sd-event in-loop post→run"]),
        ] + LoopSourceContenders.fdReadyCounts.map { ready in
            let fd = LoopSourceContenders.fdOperation(ready: ready)
            return Target(title: "\(fd) ≤ 1× the fastest of raw libevent, libuv, GLib, sd-event", row: "MainLoop \(fd)",
                          baseline: "raw libevent \(fd)", limit: 1, atLeast: false,
                          otherBaselines: ["libuv \(fd)", "GLib \(fd)", "sd-event \(fd)"])
        } + MillionTimers.Phase.allCases.map { phase in
            Target(title: "\(phase.operation) ≤ 1× the fastest of raw libevent, libuv, GLib, sd-event",
                   row: "MainLoop \(phase.operation)", baseline: "raw libevent \(phase.operation)", limit: 1, atLeast: false,
                   otherBaselines: ["libuv", "GLib", "sd-event"].map { "\($0) \(phase.operation)" })
        } + [
            Target(title: "\(idle) ≤ 1× the fastest of libuv, GLib, sd-event", row: "MainLoop \(idle)",
                   baseline: "libuv \(idle)", limit: 1, atLeast: false,
                   otherBaselines: ["GLib \(idle)", "sd-event \(idle)"]),
            // Starting a process dominates (fork and exec, hundreds of µs),
            // so the rounds' spread is a few percent whoever delivers the end.
            Target(title: "\(child) ≤ 1.1× the fastest of libuv, GLib, sd-event", row: "MainLoop \(child)",
                   baseline: "libuv \(child)", limit: 1.1, atLeast: false,
                   otherBaselines: ["GLib \(child)", "sd-event \(child)"]),
        ]
    }()

    /// The large end flat, 10^3 to 10^6 subjects.
    static let scaling: [Target] = [
        Target(title: "held keyed flat: 1000000 subjects ≤ 1.2× 1000 subjects",
               row: "MainLoop held coalesce, keyed, 1000000 subjects",
               baseline: "MainLoop held coalesce, keyed, 1000 subjects", limit: 1.2, atLeast: false),
        Target(title: "resume flush flat: 1000000 subjects ≤ 1.2× 1000 subjects (per notification)",
               row: "MainLoop resume flush, 1000000 held subjects (per notification)",
               baseline: "MainLoop resume flush, 1000 held subjects (per notification)", limit: 1.2, atLeast: false),
    ]

    /// A post wakes a sleeping loop about as fast as the
    /// C floor, and an actor on the loop is no slower to call than one on
    /// SwiftNIO's loop.
    static let wake: [Target] = WakeLatency.Placement.allCases.flatMap { placement in
        [WakeLatency.Poster.execute, .typed].map { poster in
            Target(title: "wake p50, \(placement.rawValue), \(poster == .execute ? "loop.execute" : "typed post") ≤ 1.1× C",
                   row: WakeLatency.name(poster, placement), baseline: WakeLatency.name(.libevent, placement),
                   limit: 1.1, atLeast: false)
        }
    } + WakeLatency.Placement.allCases.flatMap { placement in
        [WakeLatency.Poster.execute, .typed].map { poster in
            Target(title: "wake p50, \(placement.rawValue), \(poster == .execute ? "loop.execute" : "typed post") "
                       + "≤ 1× the fastest of libevent, libuv, GLib, sd-event",
                   row: WakeLatency.name(poster, placement), baseline: WakeLatency.name(.libevent, placement),
                   limit: 1, atLeast: false,
                   otherBaselines: [.libuv, .glib, .sdEvent].map { WakeLatency.name($0, placement) })
        }
    } + [
        Target(title: "actor call on loop.executor ≤ 1× an actor on a SwiftNIO loop",
               row: "MainLoop actor on loop.executor, call from a global task",
               baseline: "SwiftNIO actor on EventLoop.executor, call from a global task", limit: 1, atLeast: false),
    ]

    /// MainLoopNIO no slower than SwiftNIO's own loops.
    static let nio: [Target] = [
        ("execute in-loop", "MainLoopNIO loop.eventLoop.execute, in-loop", "SwiftNIO EventLoop.execute, in-loop"),
        ("execute cross-thread", "MainLoopNIO loop.eventLoop.execute, cross-thread",
         "SwiftNIO EventLoop.execute, cross-thread"),
        ("future hop onto the loop", "MainLoopNIO future hop, NIO loop → loop.eventLoop", "SwiftNIO future hop, NIO loop → other NIO loop"),
        ("scheduleTask+cancel", "MainLoopNIO scheduleTask+cancel, 1000 pending", "SwiftNIO scheduleTask+cancel, 1000 pending"),
    ].map { title, row, baseline in
        Target(title: "MainLoopNIO \(title) ≤ 1× SwiftNIO", row: row, baseline: baseline, limit: 1, atLeast: false)
    }

    /// The paired ratios (or the samples, for an absolute bound); nil when
    /// a row was not measured (`--only`).
    func ratios(_ samples: [String: [Double]]) -> [Double]? {
        guard let values = samples[row] else { return nil }
        guard let baseline else { return values }
        let columns = ([baseline] + otherBaselines).compactMap { samples[$0] }
        guard columns.count == 1 + otherBaselines.count else { return nil }
        return values.indices.map { round in values[round] / columns.map { $0[round] }.min()! }
    }

    /// Whether `value` meets the target.
    func isMet(by value: Double) -> Bool { atLeast ? value >= limit : value <= limit }
}
