import Glibc
import MainLoopJSON

/// Bytes received and not yet handled, or waiting to be sent: appended at
/// the back, consumed from the front in O(1) per byte (an index moves; the
/// storage is compacted only when the consumed prefix is larger than what
/// is left, so each byte is moved at most once on average).
struct ByteQueue {
    private var storage: [UInt8] = []
    private var start = 0

    /// How many bytes wait.
    var count: Int { storage.count - start }
    var isEmpty: Bool { count == 0 }

    mutating func append(contentsOf bytes: some Sequence<UInt8>) {
        storage.append(contentsOf: bytes)
    }

    /// Appends the bytes `buffer` holds (one copy, for what `recv` read).
    mutating func append(_ buffer: UnsafeRawBufferPointer) {
        storage.append(contentsOf: buffer.assumingMemoryBound(to: UInt8.self))
    }

    /// How far into the waiting bytes the first `byte` is, if any.
    /// (`memchr`, which compares many bytes at once: the generic search of
    /// the slice compared one at a time, about seven instructions a byte,
    /// and every request line is searched for its newline.)
    func firstOffset(of byte: UInt8) -> Int? {
        storage.withUnsafeBufferPointer { buffer -> Int? in
            guard let base = buffer.baseAddress, start < buffer.count,
                  let found = memchr(base + start, Int32(byte), buffer.count - start) else { return nil }
            return UnsafeRawPointer(base + start).distance(to: UnsafeRawPointer(found))
        }
    }

    /// `body` with the first `count` waiting bytes, in place (no copy).
    /// The pointer is valid only inside `body`, which must not change the
    /// queue.
    func withPrefix<Result>(_ count: Int, _ body: (UnsafeBufferPointer<UInt8>) -> Result) -> Result {
        storage.withUnsafeBufferPointer { body(UnsafeBufferPointer(rebasing: $0[start..<start + count])) }
    }

    /// Whether a waiting byte satisfies `predicate`.
    func contains(where predicate: (UInt8) -> Bool) -> Bool {
        storage[start...].contains(where: predicate)
    }

    /// Appends a reply's JSON and a newline, written straight into the
    /// queue (serialized once, no String in between); a reply over
    /// `maxBytes` is replaced by `replacement(size)`. A reply that is
    /// `cache`'s object is copied from its line; a short one printed here
    /// becomes the cache's.
    mutating func appendLine(_ object: JSONObject, maxBytes: Int, cache: ReplyTextCache?,
                             replacement: (Int) -> JSONObject) {
        if object.isIdentical(to: ControlReply.ok), ControlReply.okLine.count - 1 <= maxBytes {
            return storage.append(contentsOf: ControlReply.okLine)  // the commonest reply, printed once
        }
        if let cache, cache.appendLine(of: object, to: &storage, maxBytes: maxBytes) { return }
        let before = storage.count
        JSONValue.object(object).appendJSON(to: &storage)
        let size = storage.count - before
        let fits = size <= maxBytes
        if !fits {
            storage.removeSubrange(before...)
            JSONValue.object(replacement(size)).appendJSON(to: &storage)
        }
        storage.append(UInt8(ascii: "\n"))
        if fits { cache?.remember(object, line: storage[before...]) }  // never a replacement's line
    }

    /// Drops the first `count` bytes (those just sent, or handled).
    mutating func consume(_ count: Int) {
        start += count
        if start == storage.count {
            storage.removeAll(keepingCapacity: storage.capacity <= 64 * 1024)
            start = 0
        } else if start > storage.count - start {
            storage.removeSubrange(0..<start)
            start = 0
        }
    }

    mutating func removeAll() {
        storage = []
        start = 0
    }

    /// The waiting bytes, for `send`.
    func withUnsafeBytes<Result>(_ body: (UnsafeRawBufferPointer) throws -> Result) rethrows -> Result {
        try storage.withUnsafeBytes { try body(UnsafeRawBufferPointer(rebasing: $0[start...])) }
    }
}
