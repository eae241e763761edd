import MainLoop
import MainLoopJSON
import SystemNotifications

/// Notices changes to a user-defaults file made by any process (inotify on
/// its directory) and posts one `userDefaults` event per changed key; the
/// notification center then delivers them live or holds and merges them.
///
/// A corrupt file is reported through `onError` and ignored: the last good
/// snapshot stays, so the next good write produces the right key diff.
/// Loop thread only; may be released on any thread (it stops watching on the loop).
public final class UserDefaultsMonitor {
    /// The store watched.
    public let store: UserDefaultsStore
    /// The last good contents.
    public private(set) var snapshot: JSONObject
    private let post: (SystemEvent) -> Void
    private let onError: (UserDefaultsError) -> Void
    private let watcher: FileWatcher
    private var watch: FileWatcher.Token?

    public init(store: UserDefaultsStore, watcher: FileWatcher, post: @escaping (SystemEvent) -> Void,
                onError: @escaping (UserDefaultsError) -> Void) throws(MainLoopError) {
        self.store = store
        self.post = post
        self.onError = onError
        do {
            snapshot = try store.dictionary()
        } catch {
            snapshot = JSONObject()
            onError(error)
        }
        // The directory must exist to be watched.
        do { try store.createParentDirectories() } catch { onError(error) }
        self.watcher = watcher
        watch = try watcher.watch(store.path) { [weak self] in self?.reload() }
    }

    deinit {
        guard let watch else { return }
        watcher.loop.releaseOnLoop((watcher, watch)) { watcher, watch in watcher.unwatch(watch) }
    }

    /// The current contents as events (for the center's initial values).
    public var initialEvents: [SystemEvent] {
        snapshot.map { SystemEvent.userDefault(key: $0.key, value: $0.value) }
    }

    /// Re-reads the file and posts each key whose value changed.
    public func reload() {
        let current: JSONObject
        do {
            current = try store.dictionary()
        } catch {
            onError(error)
            return
        }
        var keys = snapshot.orderedKeys
        for key in current.orderedKeys where snapshot[key] == nil { keys.append(key) }
        for key in keys where current[key] != snapshot[key] {
            post(.userDefault(key: key, value: current[key]))
        }
        snapshot = current
    }
}

/// Bound to its loop's thread: to use it from another thread, carry it in a
/// `LoopBound` and reach it on the loop (`loop.execute`).
@available(*, unavailable)
extension UserDefaultsMonitor: Sendable {}
