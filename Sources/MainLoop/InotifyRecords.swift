import Glibc

/// One record an inotify descriptor's read returned
/// (`struct inotify_event { int wd; uint32 mask, cookie, len; char name[len]; }`).
package struct InotifyRecord: Equatable {
    /// The watch it came from (`wd`; -1 for a queue overflow).
    package let watchDescriptor: Int32
    /// What happened (`IN_*` bits).
    package let mask: UInt32
    /// The name of the directory entry it concerns, or "" for the watched
    /// directory itself.
    package let name: String

    /// A record with these fields.
    package init(watchDescriptor: Int32, mask: UInt32, name: String) {
        self.watchDescriptor = watchDescriptor
        self.mask = mask
        self.name = name
    }

    /// Whether the kernel dropped records (`IN_Q_OVERFLOW`): what changed
    /// since is unknown, so every watcher must look again.
    package var isQueueOverflow: Bool { mask & UInt32(IN_Q_OVERFLOW) != 0 }

    /// The record's fixed part: `wd`, `mask`, `cookie` and `len`.
    static let headerSize = 16

    /// Calls `body` with each whole record in `bytes`, in order. A read of
    /// an inotify descriptor returns whole records only; a record cut off at
    /// the end of `bytes` is not reported, and a name ends at its first NUL
    /// (the kernel pads it with NULs to an alignment).
    package static func forEach(in bytes: UnsafeRawBufferPointer, _ body: (InotifyRecord) -> Void) {
        var offset = 0
        while offset + headerSize <= bytes.count {
            let nameLength = Int(bytes.loadUnaligned(fromByteOffset: offset + 12, as: UInt32.self))
            let end = offset + headerSize + nameLength
            guard end <= bytes.count else { return }
            let nameBytes = UnsafeRawBufferPointer(rebasing: bytes[(offset + headerSize)..<end])
            body(InotifyRecord(watchDescriptor: bytes.loadUnaligned(fromByteOffset: offset, as: Int32.self),
                               mask: bytes.loadUnaligned(fromByteOffset: offset + 4, as: UInt32.self),
                               name: String(decoding: nameBytes.prefix { $0 != 0 }, as: UTF8.self)))
            offset = end
        }
    }
}

/// Reads an inotify descriptor's queued records on the loop, a bounded
/// amount per turn: a process that keeps changing watched directories
/// cannot keep the loop in one callback; the rest is read in the next turn
/// (the descriptor stays readable). The buffer is kept between turns.
package struct InotifyRecordReader {
    /// The bytes one read asks for: room for hundreds of records.
    package static let bufferSize = 16 * 1024
    /// How many reads one turn makes at most.
    package let readsPerTurn: Int
    private var buffer = [UInt8](repeating: 0, count: bufferSize)

    /// A reader that reads at most `readsPerTurn` buffers a turn.
    package init(readsPerTurn: Int) {
        self.readsPerTurn = readsPerTurn
    }

    /// Reads what `descriptor` (an `IN_NONBLOCK` inotify descriptor) has
    /// queued, up to `readsPerTurn` buffers, and calls `body` with each
    /// record in order. It stops early when the queue is empty (`EAGAIN`)
    /// or the read fails.
    package mutating func readQueued(from descriptor: Int32, _ body: (InotifyRecord) -> Void) {
        for _ in 0..<readsPerTurn {
            let count = buffer.withUnsafeMutableBytes { read(descriptor, $0.baseAddress, $0.count) }
            guard count > 0 else { return }
            buffer.withUnsafeBytes { InotifyRecord.forEach(in: UnsafeRawBufferPointer(rebasing: $0[..<count]), body) }
        }
    }
}
