import MainLoop

/// What one run of the app has of scheduled background work: its
/// registered launch handlers, the requests waiting, and the task running
/// now (at most one). Kept in ``AppRun``, so a kill, terminate or purge
/// ends all of it.
struct ScheduledWork {
    /// A submitted request with the instant it may begin.
    struct Pending {
        let request: ScheduledTaskRequest
        let begin: LoopInstant
    }

    /// Launch handlers by identifier.
    var launchHandlers: [String: (ScheduledTask) -> Void] = [:]
    /// Requests waiting to run, in submission order (one per identifier).
    var pending: [Pending] = []
    /// The task running now.
    var running: ScheduledTask?

    /// At most this many pending requests of each kind, as iOS allows
    /// (one app refresh, ten processing tasks).
    static func limit(of kind: ScheduledTaskRequest.Kind) -> Int {
        switch kind {
        case .appRefresh: 1
        case .processing: 10
        }
    }

    /// The request to run now: of those whose begin has come and whose
    /// conditions hold, the one that may begin first (in submission order
    /// among equals).
    func due(at now: LoopInstant, externalPower: Bool, network: Bool) -> Int? {
        var chosen: Int?
        for (index, entry) in pending.enumerated() where entry.begin <= now {
            guard !entry.request.requiresExternalPower || externalPower,
                  !entry.request.requiresNetworkConnectivity || network else { continue }
            if let best = chosen, pending[best].begin <= entry.begin { continue }
            chosen = index
        }
        return chosen
    }

    /// Whether a request's begin has come while its conditions do not hold.
    func waitsForConditions(at now: LoopInstant) -> Bool {
        pending.contains { $0.begin <= now && ($0.request.requiresExternalPower || $0.request.requiresNetworkConnectivity) }
    }

    /// The earliest begin still to come, if any.
    func nextBegin(after now: LoopInstant) -> LoopInstant? {
        pending.lazy.map(\.begin).filter { $0 > now }.min()
    }
}
