import Glibc
import MainLoop

/// Watches files for replacement or modification with inotify, on the loop.
///
/// It watches each file's *directory*, not the file: tools and our own
/// atomic writes replace files by rename, and `ln -sf` replaces
/// /etc/localtime by unlink + symlink, either of which would orphan a watch
/// on the old inode. Events for one file in one read batch are coalesced
/// into one handler call. Loop thread only.
public final class FileWatcher {
    private let loop: MainRunLoop
    private let inotifyFD: Int32
    private var source: FileDescriptorSource?
    /// Watch descriptor → (file name in that directory → handlers).
    private var watches: [Int32: [String: [() -> Void]]] = [:]
    private var directories: [String: Int32] = [:]

    /// What counts as a change of a file in a watched directory.
    private static let mask = UInt32(IN_CLOSE_WRITE | IN_MOVED_TO | IN_MOVED_FROM | IN_CREATE | IN_DELETE | IN_ATTRIB)

    /// - Throws: ``MainLoopError/system(operation:errno:)`` when inotify is unavailable.
    public init(loop: MainRunLoop) throws(MainLoopError) {
        self.loop = loop
        inotifyFD = inotify_init1(Int32(IN_NONBLOCK | IN_CLOEXEC))
        guard inotifyFD >= 0 else { throw .system(operation: "inotify_init1", errno: errno) }
        source = try loop.addFileDescriptor(inotifyFD, interest: .read, priority: .system) { [unowned self] _ in
            self.readEvents()
        }
    }

    deinit {
        // After the loop shut down, its sources are already released.
        if let source, !source.isRemoved { try? source.remove() }
        close(inotifyFD)
    }

    /// Calls `handler` on the loop whenever `path` is written, replaced,
    /// created or deleted.
    /// - Throws: ``MainLoopError/system(operation:errno:)`` when the
    ///   directory cannot be watched (for example, it does not exist).
    public func watch(_ path: String, handler: @escaping () -> Void) throws(MainLoopError) {
        loop.preconditionInLoop()
        let (directory, name) = Self.split(path)
        let descriptor: Int32
        if let existing = directories[directory] {
            descriptor = existing
        } else {
            descriptor = inotify_add_watch(inotifyFD, directory, Self.mask)
            guard descriptor >= 0 else { throw .system(operation: "inotify_add_watch(\(directory))", errno: errno) }
            directories[directory] = descriptor
        }
        watches[descriptor, default: [:]][name, default: []].append(handler)
    }

    static func split(_ path: String) -> (directory: String, name: String) {
        guard let slash = path.lastIndex(of: "/") else { return (".", path) }
        let directory = String(path[..<slash])
        return (directory.isEmpty ? "/" : directory, String(path[path.index(after: slash)...]))
    }

    private func readEvents() {
        var buffer = [UInt8](repeating: 0, count: 16 * 1024)
        var changed: [(Int32, String)] = []
        while true {
            let count = read(inotifyFD, &buffer, buffer.count)
            guard count > 0 else { break }
            var offset = 0
            // struct inotify_event { int wd; uint32 mask, cookie, len; char name[len]; }
            while offset + 16 <= count {
                let (descriptor, nameLength) = buffer.withUnsafeBytes { raw in
                    (raw.load(fromByteOffset: offset, as: Int32.self), Int(raw.load(fromByteOffset: offset + 12, as: UInt32.self)))
                }
                let nameBytes = buffer[(offset + 16)..<min(count, offset + 16 + nameLength)].prefix { $0 != 0 }
                let name = String(decoding: nameBytes, as: UTF8.self)
                if !changed.contains(where: { $0.0 == descriptor && $0.1 == name }) { changed.append((descriptor, name)) }
                offset += 16 + nameLength
            }
        }
        for (descriptor, name) in changed {
            for handler in watches[descriptor]?[name] ?? [] { handler() }
        }
    }
}
