import FileSupport
import CLinux
import Glibc
import MainLoop
import SystemNotifications

/// Accessories and screens from the kernel's device events, on the loop:
/// a `NETLINK_KOBJECT_UEVENT` socket (udev's group when udev runs, else the
/// kernel's), its descriptor an fd source.
///
/// | event | posts |
/// |---|---|
/// | `usb`, `DEVTYPE=usb_device`, add / remove | `accessory` connected true / false, keyed by ``accessoryID(of:)`` |
/// | `drm` change with `HOTPLUG=1` (and at start) | `screen` for each connector `/sys/class/drm/cardN-NAME/status` that changed, and `screenMode` with the first line of its `modes` |
///
/// Only the kernel and root may send on this socket; each datagram is
/// still parsed as untrusted input (bounded, strict UTF-8), and the sysfs
/// files are read through ``/FileSupport/FileContents/regularFileBytes(_:maxBytes:)``.
/// Loop thread only.
public final class DeviceEventSource {
    /// Where connectors are listed (`card0-HDMI-A-1`, …).
    public let drmDirectory: String
    private let loop: MainRunLoop
    private let socket: Int32
    private var source: FileDescriptorSource?
    private let post: (SystemEvent) throws -> Void
    private let onProblem: (String) -> Void
    /// The id each connected USB device was posted under, by device path
    /// (a remove event may lack `ID_SERIAL`); bounded, and holding only
    /// devices whose connection the center took.
    private var accessoryIDs: [String: String] = [:]
    /// Each connector's last posted status and mode.
    private var screens: [String: (connected: Bool, mode: String?)] = [:]
    private static let maxAccessories = 1024
    private static let maxScreens = 64

    /// Opens the event socket and reads the connectors' current state.
    /// - Parameters:
    ///   - loop: the loop whose thread reads the events.
    ///   - drmDirectory: where DRM connectors are listed.
    ///   - post: each event (the connectors read at start are posted too:
    ///     pass them as the baseline with the center's `setInitialValue`
    ///     when the app is not running yet). An error it throws (the
    ///     center refused the event) is reported through `onProblem`, and a
    ///     device whose connection was refused is not tracked.
    ///   - onProblem: an unreadable connector file or a refused read, rate-limit it.
    /// - Throws: ``/MainLoop/MainLoopError`` when the socket cannot be made
    ///   (no netlink: a container without it).
    public init(loop: MainRunLoop, drmDirectory: String = "/sys/class/drm",
                post: @escaping (SystemEvent) throws -> Void, onProblem: @escaping (String) -> Void) throws(MainLoopError) {
        self.drmDirectory = drmDirectory
        self.loop = loop
        self.post = post
        self.onProblem = onProblem
        // udev's group (events after its rules, with ID_SERIAL) when udev
        // runs; the kernel's otherwise.
        let descriptor = CLinux_uevent_socket(access("/run/udev/control", F_OK) == 0 ? 2 : 1)
        guard descriptor >= 0 else { throw .system(operation: "the uevent socket (NETLINK_KOBJECT_UEVENT)", errno: -descriptor) }
        socket = descriptor
        do {
            source = try loop.addFileDescriptor(descriptor, interest: .read, priority: .input, owner: self) { owner, _ in
                owner.readEvents()
            }
        } catch {
            // Every stored property is set: deinit runs and closes the socket.
            throw error
        }
    }

    deinit {
        if let source {
            let descriptor = socket
            loop.releaseOnLoop(source) { source in
                source.removeIfNeeded()
                close(descriptor)
            }
        } else {
            close(socket)
        }
    }

    /// Reads every connector now and posts what changed (at start and
    /// after a hotplug event).
    public func rescanScreens() {
        // Connectors are "cardN-NAME"; the cards themselves have no dash.
        guard let connectors = DirectoryNames.list(drmDirectory, limit: Self.maxScreens, where: {
            $0.hasPrefix("card") && $0.contains("-")
        }) else { return }
        let seen = Set(connectors)
        for name in connectors {
            let path = drmDirectory + "/" + name
            let status: String
            do {
                status = String(decoding: try FileContents.regularFileBytes(path + "/status", maxBytes: 64), as: UTF8.self)
                    .trimmingWhitespace()
            } catch {
                onProblem("screen \(name): status not read (\(error))")
                continue
            }
            let connected = status == "connected"
            var mode: String?
            if connected {
                do {
                    let modes = try FileContents.regularFileBytes(path + "/modes", maxBytes: 64 * 1024)
                    mode = String(decoding: modes, as: UTF8.self).split(separator: "\n").first.map(String.init)
                } catch {
                    onProblem("screen \(name): modes not read (\(error)); the screen is posted without one")
                }
            }
            let previous = screens[name]
            if previous?.connected != connected { send(.screen(id: name, connected: connected)) }
            if connected, let mode, previous?.mode != mode { send(.screenMode(screen: name, mode: mode)) }
            screens[name] = (connected, connected ? mode : nil)
        }
        for (name, state) in screens where !seen.contains(name) && state.connected {
            send(.screen(id: name, connected: false))
            screens[name] = (false, nil)
        }
    }

    /// Handles one event (the fd handler, and tests).
    public func handle(_ event: Uevent) {
        let subsystem = event.properties["SUBSYSTEM"]
        if subsystem == "usb", event.properties["DEVTYPE"] == "usb_device", let devicePath = event.properties["DEVPATH"] {
            switch event.action {
            case "add":
                guard accessoryIDs.count < Self.maxAccessories || accessoryIDs[devicePath] != nil else {
                    return onProblem("more than \(Self.maxAccessories) USB devices connected; \(devicePath) is not tracked")
                }
                let id = Self.accessoryID(of: event.properties)
                guard send(.accessory(id: id, connected: true)) else { return }
                accessoryIDs[devicePath] = id
            case "remove":
                let id = accessoryIDs.removeValue(forKey: devicePath) ?? Self.accessoryID(of: event.properties)
                send(.accessory(id: id, connected: false))
            default:
                break
            }
        } else if subsystem == "drm", event.action == "change", event.properties["HOTPLUG"] == "1" {
            rescanScreens()
        }
    }

    /// The id a USB device is posted under: `ID_SERIAL@PORT`, the port
    /// being the last element of its device path (`1-1.2`), so two devices
    /// with one serial (udev gives serial-less devices of one model the
    /// same `ID_SERIAL`) are two accessories, and a device keeps its id
    /// while it stays on its port; the device path where there is no serial.
    public static func accessoryID(of properties: [String: String]) -> String {
        let devicePath = properties["DEVPATH"] ?? ""
        guard let serial = properties["ID_SERIAL"] else { return devicePath }
        let port = devicePath.split(separator: "/").last.map(String.init) ?? devicePath
        return serial + "@" + port
    }

    /// Posts `event`; false (and the reason reported) when it was refused.
    @discardableResult
    private func send(_ event: SystemEvent) -> Bool {
        do {
            try post(event)
            return true
        } catch {
            onProblem("\(event.kind) not posted: \(error)")
            return false
        }
    }

    /// Reads the waiting datagrams (a bounded batch per callback).
    private func readEvents() {
        var buffer = [UInt8](repeating: 0, count: 16 * 1024)
        for _ in 0..<64 {
            // MSG_TRUNC: the datagram's real length, so a truncated one is
            // seen as such and dropped rather than parsed in part.
            let count = recv(socket, &buffer, buffer.count, Int32(MSG_DONTWAIT) | Int32(MSG_TRUNC))
            guard count > 0 else { return }
            guard count <= buffer.count else {
                onProblem("a device event of \(count) bytes was longer than \(buffer.count) and was dropped")
                continue
            }
            if let event = Uevent.parse(Array(buffer[0..<count])) { handle(event) }
        }
    }
}

/// Bound to its loop's thread.
@available(*, unavailable)
extension DeviceEventSource: Sendable {}
