import AppLifecycle
import MainLoop
import MainLoopJSON
import SystemNotifications

/// A deterministic loop, an application and a center; records notifications
/// as "name payload merged" strings.
final class CenterHarness {
    let loop: MainRunLoop
    let app: Application
    let center: SystemNotificationCenter
    var received: [String] = []

    init() throws {
        loop = try MainRunLoop(deterministic: true)
        app = try Application(loop: loop)
        center = SystemNotificationCenter(application: app)
    }

    func observeAll() throws {
        try center.addObserver { [unowned self] in self.received.append(Self.describe($0)) }
    }

    static func describe(_ notification: SystemNotification) -> String {
        "\(notification.name) \(JSONValue.object(notification.payload).jsonText) x\(notification.merged)"
    }

    func post(_ events: SystemEvent...) throws {
        for event in events { try center.post(event) }
        try loop.runUntilIdle()
    }

    func take() -> [String] {
        defer { received.removeAll() }
        return received
    }
}
