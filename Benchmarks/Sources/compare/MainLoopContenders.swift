import AppLifecycle
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
            if counter.value == events { try? loop.stop() }
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
                        if counter.value == events { try? loop.stop() }
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
        let application = Application(loop: loop)
        let center = application.notifications
        let counter = Counter()
        for _ in 0..<observers { try center.addObserver(for: .orientation) { _ in counter.value &+= 1 } }
        try application.perform(.launch)
        return try postOrientations(events: events, center: center, loop: loop)
    }

    /// Holding while suspended: the coalesce cost per event.
    static func heldCoalesce(events: Int) throws -> Double {
        let loop = try MainRunLoop()
        let application = Application(loop: loop)
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
