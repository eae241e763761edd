import AppLifecycle
import Foundation
import Glibc
import MainLoopKit
import Logging
import MainLoop
import MainLoopJSON
import Testing
import TestSupport
@testable import mainloop

/// The service on its own loop thread, talked to over its real socket.
final class RunningService: @unchecked Sendable {
    let directory = TemporaryDirectory()
    let thread: LoopThread
    let socket: String
    private let lock = NSLock()
    private var lines: [JSONObject] = []
    /// Touched only on the service's loop thread.
    private var host: ServiceHost?

    init(socketMode: mode_t = 0o600, configuration: LifecycleConfiguration = LifecycleConfiguration()) throws {
        // Let other users reach the socket file itself, so the socket's own
        // mode and the peer-credential check are what keep them out.
        chmod(directory.path, 0o755)
        thread = try LoopThread.start()
        socket = directory.file("control.sock")
        var options = ServiceOptions(socketPath: socket)
        options.defaultsFile = directory.file("defaults.json")
        options.localeFile = directory.file("locale")
        options.zoneFiles = [directory.file("localtime")]
        options.detectClockSet = false
        options.socketMode = socketMode
        let loop = thread.loop
        let serviceOptions = options
        let ready = DispatchSemaphore(value: 0)
        try loop.execute { [unowned self] in
            let host = try! ServiceHost(options: serviceOptions, loop: loop, logger: Logger(label: "test"),
                                        configuration: configuration) { [unowned self] line in
                self.lock.lock(); self.lines.append(line); self.lock.unlock()
            }
            try! host.start()
            self.host = host
            ready.signal()
        }
        guard ready.wait(timeout: .now() + 30) == .success else {
            throw TestFailure("the loop thread did not start the service host within 30 s")
        }
    }

    func stop() {
        let done = DispatchSemaphore(value: 0)
        try? thread.loop.execute { [unowned self] in
            self.host?.shutdown()
            self.host = nil
            done.signal()
        }
        // A loop thread that never got there is left behind (joining it
        // would hang the run); the test fails, named.
        guard done.wait(timeout: .now() + 30) == .success else {
            Issue.record("the loop thread did not shut the service host down within 30 s")
            return
        }
        #expect(throws: Never.self) { try thread.stopAndJoin() }
    }

    var observations: [JSONObject] { lock.lock(); defer { lock.unlock() }; return lines }
    var notifications: [JSONObject] { observations.filter { $0["notification"] != nil } }

    func send(_ request: JSONValue) throws -> JSONObject { try ControlClient.send(request, to: socket) }
}

@Suite(.ownThread, .timeLimit(.minutes(2))) struct ControlSocketTests {
    @Test func garbageOversizeHalfClosedAndAbruptClientsNeverHurtTheService() throws {
        let service = try RunningService()
        defer { service.stop() }
        _ = try service.send(["lifecycle": "home"])
        _ = try service.send(["system": ["orientation": "faceUp"]])

        #expect(try ControlClient.exchange(Array("garbage\n".utf8), path: service.socket).contains("malformed JSON"))
        #expect(try ControlClient.exchange(Array("[1,2]\n".utf8), path: service.socket).contains("exactly one of"))
        #expect(try service.send(["lifecycle": "fly"])["error"]?.stringValue?.contains("unknown lifecycle command") == true)
        #expect(try service.send(["lifecycle": "launch"])["error"]?.stringValue?.contains("not allowed in state 'suspended'") == true)
        #expect(try service.send(["system": ["weather": "rain"]])["error"]?.stringValue?.contains("unknown notification kind") == true)
        #expect(try service.send(["query": "everything"])["ok"] == .bool(false))
        let oversize = [UInt8](repeating: UInt8(ascii: "a"), count: 200 * 1024)
        #expect(try ControlClient.exchange(oversize, path: service.socket).contains("exceeds 65536 bytes"))
        let halfClosed = try ControlClient.exchange(Array(#"{"query":"state"}"#.utf8), path: service.socket, shutdownWrite: true)
        #expect(halfClosed.contains("incomplete request"))
        // Abrupt closes: connect, send part of a line, vanish.
        for _ in 0..<20 {
            let fd = socket(AF_UNIX, Int32(SOCK_STREAM.rawValue), 0)
            var address = sockaddr_un()
            address.sun_family = sa_family_t(AF_UNIX)
            withUnsafeMutableBytes(of: &address.sun_path) { $0.copyBytes(from: Array(service.socket.utf8) + [0]) }
            _ = withUnsafePointer(to: &address) { $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                connect(fd, $0, socklen_t(MemoryLayout<sockaddr_un>.size)) } }
            _ = send(fd, "{\"lifecy", 8, Int32(MSG_NOSIGNAL))
            var linger = Glibc.linger(l_onoff: 1, l_linger: 0)
            setsockopt(fd, SOL_SOCKET, SO_LINGER, &linger, socklen_t(MemoryLayout<Glibc.linger>.size))
            close(fd)
        }
        // Several requests on one connection, in order.
        let pipelined = try ControlClient.exchange(Array("{\"query\":\"state\"}\n{\"query\":\"stats\"}\n".utf8), path: service.socket)
        #expect(pipelined.contains("\"state\":\"suspended\""))

        let state = try service.send(["query": "state"])
        #expect(state["state"] == "suspended" && state["holding"] == .bool(true) && state["heldSlots"] == 1)
        _ = try service.send(["lifecycle": "foreground"])
        #expect(eventually { service.notifications.count == 1 })
        #expect(service.notifications.first?["orientation"] == "faceUp", "the held notification survived the abuse")
        let stats = try service.send(["query": "stats"])
        #expect((stats["malformedRequests"]?.numberValue ?? 0) >= 1)
    }

    @Test(.enabled(if: getuid() == 0 && FileManager.default.isExecutableFile(atPath: "/usr/bin/setpriv"),
                   "needs root and setpriv to connect as another user"))
    func anotherUserIsRefusedByPeerCredentials() throws {
        // Mode 0666 so the other user can reach the socket at all; the
        // SO_PEERCRED check must still refuse it.
        let service = try RunningService(socketMode: 0o666)
        defer { service.stop() }
        let result = try BuiltTool.run(["ctl", "--socket", service.socket, "state"],
                                       prefix: ["/usr/bin/setpriv", "--reuid=65534", "--regid=65534", "--clear-groups"])
        #expect(result.status != 0)
        #expect(result.output.contains("permission denied: uid 65534"), "\(result)")
        #expect(try service.send(["query": "stats"])["refusedPeers"] == 1)
    }

    @Test(.enabled(if: getuid() == 0 && FileManager.default.isExecutableFile(atPath: "/usr/bin/setpriv"),
                   "needs root and setpriv to connect as another user"))
    func theDefaultSocketModeKeepsOtherUsersOut() throws {
        let service = try RunningService()
        defer { service.stop() }
        var status = stat()
        stat(service.socket, &status)
        #expect(status.st_mode & 0o777 == 0o600)
        let result = try BuiltTool.run(["ctl", "--socket", service.socket, "state"],
                                       prefix: ["/usr/bin/setpriv", "--reuid=65534", "--regid=65534", "--clear-groups"])
        #expect(result.status != 0)
        #expect(result.error.contains("Permission denied"), "\(result)")
    }
}
