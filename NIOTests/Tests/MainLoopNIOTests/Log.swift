import MainLoop

/// Lines recorded from closures NIO requires to be Sendable.
final class Log: Sendable {
    private let storage = LockedValue<[String]>([])

    func append(_ line: String) { storage.withLock { $0.append(line) } }

    var lines: [String] { storage.withLock { $0 } }

    func removeAll() { storage.withLock { $0.removeAll() } }
}

/// One value set from a Sendable closure.
final class Slot<Value>: @unchecked Sendable {
    // Why @unchecked: the value is reached only under the lock.
    private let storage = LockedValue<Value?>(nil)

    func set(_ value: Value) { storage.withLock { $0 = value } }

    var value: Value? { storage.withLock { $0 } }
}
