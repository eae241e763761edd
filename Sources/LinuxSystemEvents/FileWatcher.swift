import FileSupport
import Glibc
import MainLoop

/// Watches files for replacement or modification with inotify, on the loop.
///
/// It watches each file's *directory*, not the file: tools and our own
/// atomic writes replace files by rename, and `ln -sf` replaces
/// /etc/localtime by unlink + symlink, either of which would orphan a watch
/// on the old inode. Events for one file in one read batch are coalesced
/// into one handler call. Loop thread only, except that it may be released
/// on any thread (its cleanup then runs on the loop).
public final class FileWatcher {
    /// Identifies one ``watch(_:handler:)`` for `unwatch(_:)`.
    public struct Token: Hashable, Sendable {
        let id: Int
        let path: String
    }

    /// The loop the watcher runs on.
    public let loop: MainRunLoop
    private let inotifyFD: Int32
    private var source: FileDescriptorSource?
    /// Watch descriptor → (file name in that directory → handlers).
    private var watches: [Int32: [String: [(id: Int, body: () -> Void)]]] = [:]
    private var nextID = 0
    private var directories: [String: Int32] = [:]

    /// What counts as a change of a file in a watched directory.
    private static let mask = UInt32(IN_CLOSE_WRITE | IN_MOVED_TO | IN_MOVED_FROM | IN_CREATE | IN_DELETE | IN_ATTRIB)

    /// - Throws: ``/MainLoop/MainLoopError/system(operation:errno:)`` when inotify is unavailable.
    public init(loop: MainRunLoop) throws(MainLoopError) {
        self.loop = loop
        inotifyFD = inotify_init1(Int32(IN_NONBLOCK | IN_CLOEXEC))
        guard inotifyFD >= 0 else { throw .system(operation: "inotify_init1", errno: errno) }
        // Owned weakly: the watcher may be released on another thread, and
        // an event arriving before its cleanup runs on the loop then removes
        // the source instead of calling anyone.
        source = try loop.addFileDescriptor(inotifyFD, interest: .read, priority: .system, owner: self) { watcher, _ in
            watcher.readEvents()
        }
    }

    deinit {
        // Released on any thread: the source goes away on the loop thread,
        // then the descriptor is closed (in that order, so libevent never
        // watches a closed descriptor).
        loop.releaseOnLoop((source, inotifyFD)) { source, descriptor in
            source?.removeIfNeeded()
            close(descriptor)
        }
    }

    /// Calls `handler` on the loop whenever `path` is written, replaced,
    /// created or deleted.
    /// - Throws: ``/MainLoop/MainLoopError/system(operation:errno:)`` when the
    ///   directory cannot be watched (for example, it does not exist).
    @discardableResult
    public func watch(_ path: String, handler: @escaping () -> Void) throws(MainLoopError) -> Token {
        loop.preconditionInLoop()
        let (directory, name) = AtomicFile.split(path)
        let descriptor: Int32
        if let existing = directories[directory] {
            descriptor = existing
        } else {
            descriptor = inotify_add_watch(inotifyFD, directory, Self.mask)
            guard descriptor >= 0 else { throw .system(operation: "inotify_add_watch(\(directory))", errno: errno) }
            directories[directory] = descriptor
        }
        nextID += 1
        watches[descriptor, default: [:]][name, default: []].append((nextID, handler))
        return Token(id: nextID, path: path)
    }

    /// Stops calling one handler (idempotent). The directory's watch is
    /// removed once none of its files is watched.
    public func unwatch(_ token: Token) {
        loop.preconditionInLoop()
        let (directory, name) = AtomicFile.split(token.path)
        guard let descriptor = directories[directory] else { return }
        watches[descriptor]?[name]?.removeAll { $0.id == token.id }
        if watches[descriptor]?[name]?.isEmpty ?? false { watches[descriptor]?[name] = nil }
        removeWatchIfUnused(directory, descriptor)
    }

    /// Stops calling every handler registered for `path`; the directory's
    /// watch is removed once none of its files is watched. Returns whether
    /// `path` was watched.
    @discardableResult
    public func unwatch(_ path: String) -> Bool {
        loop.preconditionInLoop()
        let (directory, name) = AtomicFile.split(path)
        guard let descriptor = directories[directory], watches[descriptor]?[name] != nil else { return false }
        watches[descriptor]?[name] = nil
        removeWatchIfUnused(directory, descriptor)
        return true
    }

    private func removeWatchIfUnused(_ directory: String, _ descriptor: Int32) {
        guard watches[descriptor]?.isEmpty ?? true else { return }
        watches[descriptor] = nil
        directories[directory] = nil
        inotify_rm_watch(inotifyFD, descriptor)
    }

    /// The paths watched now, sorted.
    public var watchedPaths: [String] {
        directories.flatMap { directory, descriptor in
            (watches[descriptor] ?? [:]).keys.map { directory == "/" ? "/" + $0 : directory + "/" + $0 }
        }.sorted()
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
            for handler in watches[descriptor]?[name] ?? [] { handler.body() }
        }
    }
}

/// Bound to its loop's thread: to use it from another thread, carry it in a
/// `LoopBound` and reach it on the loop (`loop.execute`).
@available(*, unavailable)
extension FileWatcher: Sendable {}
