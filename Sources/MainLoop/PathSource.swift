import Glibc

/// Changes to one path, from inotify, delivered on the loop thread.
///
/// A path that is a directory when the source is added is watched as one:
/// events name the entries inside it. Any other path (a file, or nothing
/// yet) is watched through its directory, so a file replaced by rename
/// (atomic writes, editors, `ln -sf`) is seen as `deleted`/`created` and
/// the watch goes on with the new file. A directory on the way that does
/// not exist yet is waited for: the source watches the nearest existing
/// ancestor and moves down as the directories appear (reporting the path
/// as `created` if it is already there); one removed moves it back up. The
/// source never opens what it watches, so a FIFO or a device put in place
/// of a file is reported like any file and cannot block the loop.
///
/// Events not yet delivered (one read batch, or what a hold or a rate
/// limit kept) are merged per entry and kind, in the order they last came,
/// so an entry's last event tells its state. When the kernel's queue overflowed, every source gets
/// one ``PathEvent/Kind/overflow``: read what you watch again. Created with
/// ``MainRunLoop/addPath(_:events:priority:handler:)``; rate-limited with
/// ``setRateLimit(_:)``. Loop thread only.
public final class PathSource: LoopRegistered {
    /// The watched path (made absolute and lexically clean).
    public let path: String
    /// The changes reported.
    public let events: PathEvents
    /// Whether it was removed (by ``remove()`` or at shutdown).
    public private(set) var isRemoved = false
    /// Whether the path was a directory when the source was added (its
    /// entries are watched) rather than a file or nothing (the path itself).
    public let watchesDirectoryEntries: Bool

    private let core: LoopCore
    private let hub: PathWatchHub
    private let handler: (PathEvent) -> Void
    /// The directory whose events matter: the path itself or its parent.
    private let target: String
    /// The name in `target` that matters (nil: every entry).
    private let name: String?
    /// The directory watched now (`target` or, until it exists, the
    /// nearest ancestor that does) and its watch descriptor.
    private var watched: (directory: String, descriptor: Int32)?
    /// Events read and not yet delivered, merged; bounded.
    private var pending: [PathEvent] = []
    /// Set when the watch must be set up again after this batch.
    private var needsReattach = false
    /// Set when no directory on the way can be watched any more: the
    /// source ends once its last events are delivered.
    private var giveUpAfterDelivery = false
    /// Whether the watched file exists, as far as the events tell (so that
    /// its directory's removal or rename reports it gone only if it was there).
    private var fileExists = false
    private var limiter = SourceRateLimit()
    /// Whether changes are kept instead of delivered (``setHolding(_:)``).
    public private(set) var isHolding = false

    /// How many distinct pending events a source keeps; past it they are
    /// replaced by one overflow (the handler reads the state again).
    static let pendingLimit = 1024

    /// The source's rate limit, if any.
    public var rateLimit: RateLimit? { limiter.limit }
    /// Whether a rate limit pauses the source until its window ends.
    public var isPaused: Bool { limiter.isPaused }

    init(core: LoopCore, hub: PathWatchHub, path: String, events: PathEvents,
         handler: @escaping (PathEvent) -> Void) throws(MainLoopError) {
        guard !path.isEmpty, !path.utf8.contains(0) else { throw .invalidArgument("a path to watch must be a non-empty string without NUL") }
        let clean = Self.absoluteClean(path)
        self.core = core
        self.hub = hub
        self.path = clean
        self.events = events
        self.handler = handler
        var status = stat()
        watchesDirectoryEntries = lstat(clean, &status) == 0 && status.st_mode & S_IFMT == S_IFDIR
        if watchesDirectoryEntries || clean == "/" {
            target = clean
            name = nil
        } else {
            (target, name) = Self.split(clean)
        }
        if let error = attach() { throw error }
        fileExists = name != nil && lstat(clean, &status) == 0
    }

    /// Limits deliveries to `limit` (nil: no limit, and a paused source
    /// resumes at once). Changes that come while paused are kept, merged,
    /// and delivered when the window ends.
    /// - Throws: ``MainLoopError/sourceRemoved`` once removed.
    public func setRateLimit(_ limit: RateLimit?) throws(MainLoopError) {
        core.preconditionInLoop()
        guard !isRemoved else { throw .sourceRemoved }
        if limiter.set(limit) { resume() }
    }

    /// Holds changes back (true) or delivers what was held and goes on
    /// (false). Held changes are merged per entry and kind and bounded (past
    /// 1024 distinct ones they become one overflow), so a source held for
    /// hours costs no more memory than one held for a second. An
    /// `Application`'s path sources are held while the app is suspended.
    /// On a removed source it does nothing.
    public func setHolding(_ holding: Bool) {
        core.preconditionInLoop()
        guard !isRemoved, holding != isHolding else { return }
        isHolding = holding
        if !holding { deliverPending() }
    }

    /// Stops watching.
    /// - Throws: ``MainLoopError/sourceRemoved`` when already removed.
    public func remove() throws(MainLoopError) {
        core.preconditionInLoop()
        guard !isRemoved else { throw .sourceRemoved }
        releaseLoopResources()
        core.unregister(self)
    }

    /// Stops watching unless already removed: idempotent, for cleanup code.
    public func removeIfNeeded() {
        guard !isRemoved else { return }
        core.preconditionInLoop()
        releaseLoopResources()
        core.unregister(self)
    }

    // MARK: Watching

    /// Watches `target`, or the nearest ancestor that exists. Returns the
    /// error when no directory on the way can be watched (permissions, the
    /// kernel's watch limit).
    private func attach() -> MainLoopError? {
        var directory = target
        while true {
            let descriptor = hub.watch(directory, for: self)
            if descriptor >= 0 {
                watched = (directory, descriptor)
                return nil
            }
            guard (-descriptor == ENOENT || -descriptor == ENOTDIR) && directory != "/" else {
                return .system(operation: "inotify_add_watch(\(directory)) for \(path)", errno: -descriptor)
            }
            directory = Self.split(directory).directory
        }
    }

    private func detach() {
        if let watched { hub.unwatch(watched.descriptor, for: self) }
        watched = nil
    }

    /// One inotify event on the watched directory (the hub reads them).
    func received(mask: UInt32, name eventName: String, on descriptor: Int32) {
        guard !isRemoved, let watched, watched.descriptor == descriptor else { return }
        if mask & UInt32(IN_DELETE_SELF | IN_MOVE_SELF | IN_IGNORED) != 0 {
            // The watched directory went away (removed, or renamed and so no
            // longer at this path): what was watched in it is gone too.
            if watched.directory == target, mask & UInt32(IN_IGNORED) == 0 {
                if let name, fileExists { add(PathEvent(.deleted, name: name)) }
                if name == nil { add(PathEvent(.deleted, name: "")) }
                fileExists = false
            }
            needsReattach = true
            return
        }
        if watched.directory != target {
            // Waiting for a directory on the way: the next one toward the
            // target appeared (whatever else appears there is not ours).
            if mask & UInt32(IN_CREATE | IN_MOVED_TO) != 0, eventName == Self.nextComponent(from: watched.directory, to: target) {
                needsReattach = true
            }
            return
        }
        guard name == nil || eventName == name else { return }
        let kind: PathEvent.Kind
        if mask & UInt32(IN_CREATE | IN_MOVED_TO) != 0 { kind = .created }
        else if mask & UInt32(IN_DELETE | IN_MOVED_FROM) != 0 { kind = .deleted }
        else if mask & UInt32(IN_CLOSE_WRITE | IN_MODIFY) != 0 { kind = .modified }
        else { kind = .attributes }
        if name != nil, kind == .created || kind == .deleted { fileExists = kind == .created }
        add(PathEvent(kind, name: eventName))
    }

    func overflowed() { add(PathEvent(.overflow, name: "")) }

    /// Keeps `event` for delivery. One already pending moves to the end, so
    /// the last pending event of an entry tells its state (created, deleted,
    /// created again: deleted then created, not created then deleted).
    private func add(_ event: PathEvent) {
        guard event.isWanted(by: events) else { return }
        if let index = pending.firstIndex(of: event) {
            pending.remove(at: index)
        } else if pending.count >= Self.pendingLimit {
            pending = [PathEvent(.overflow, name: "")]
            return
        }
        pending.append(event)
    }

    /// After a batch: set the watch up again if needed, then deliver.
    func deliverPending() {
        if needsReattach {
            needsReattach = false
            let wasWaiting = watched?.directory != target
            detach()
            if attach() != nil {
                // Nothing on the way can be watched now (a permission
                // changed): one overflow says so, and the source is removed
                // (`isRemoved`); the handler may add it again.
                add(PathEvent(.overflow, name: ""))
                giveUpAfterDelivery = true
            } else if wasWaiting, watched?.directory == target {
                // Arrived: what may have appeared before the watch did.
                reportExisting()
            }
        }
        // One handler call per event; a rate limit counts each, and what
        // it holds back waits, merged, for the window's end.
        while !limiter.isPaused, !isHolding, !isRemoved, !pending.isEmpty {
            if limiter.isLimited, !limiter.admits(at: core.now) {
                limiter.pause(core: core) { [unowned self] in resume() }
                return
            }
            let event = pending.removeFirst()
            core.workCounter &+= 1
            handler(event)
        }
        if giveUpAfterDelivery, pending.isEmpty, !isRemoved {
            releaseLoopResources()
            core.unregister(self)
        }
    }

    /// The path exists now that its directory is watched: report it.
    private func reportExisting() {
        var status = stat()
        if let name {
            fileExists = lstat(path, &status) == 0
            if fileExists { add(PathEvent(.created, name: name)) }
        } else {
            add(PathEvent(.created, name: ""))
        }
    }

    private func resume() {
        limiter.endPause()
        guard !isRemoved else { return }
        deliverPending()
    }

    func releaseLoopResources() {
        guard !isRemoved else { return }
        isRemoved = true
        limiter.endPause()
        detach()
        pending.removeAll()
    }

    // MARK: Paths

    /// `path` made absolute (against the working directory) with `.`, `..`
    /// and repeated slashes resolved lexically; symbolic links are kept.
    static func absoluteClean(_ path: String) -> String {
        var full = path
        if !path.hasPrefix("/") {
            var buffer = [CChar](repeating: 0, count: Int(PATH_MAX) + 1)
            if getcwd(&buffer, buffer.count) != nil {
                full = String(decoding: buffer.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self) + "/" + path
            }
        }
        var parts: [Substring] = []
        for part in full.split(separator: "/") {
            if part == "." { continue }
            if part == ".." { _ = parts.popLast(); continue }
            parts.append(part)
        }
        return "/" + parts.joined(separator: "/")
    }

    /// The name in `ancestor` on the way to `path`: ("/a", "/a/b/c") → "b".
    static func nextComponent(from ancestor: String, to path: String) -> String? {
        let prefix = ancestor == "/" ? "/" : ancestor + "/"
        guard path.hasPrefix(prefix) else { return nil }
        return path.dropFirst(prefix.count).split(separator: "/").first.map(String.init)
    }

    /// "/a/b/c" → ("/a/b", "c"); "/c" → ("/", "c").
    static func split(_ path: String) -> (directory: String, name: String) {
        guard let slash = path.lastIndex(of: "/") else { return (".", path) }
        let directory = path[..<slash]
        return (directory.isEmpty ? "/" : String(directory), String(path[path.index(after: slash)...]))
    }
}

@available(*, unavailable)
extension PathSource: Sendable {}
