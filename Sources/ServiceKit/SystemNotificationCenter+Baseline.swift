import AppLifecycle
import SystemNotifications

extension SystemNotificationCenter {
    /// A value a source read: the baseline (`setInitialValue`) while the
    /// app is not running yet, a change (`post`) once it runs. Sources that
    /// read asynchronously (a daemon's reply, a device scan) use it so a
    /// value known before launch is never a notification.
    func postOrSetBaseline(_ event: SystemEvent) throws {
        if application.state == .notRunning {
            try setInitialValue(event)
        } else {
            try post(event)
        }
    }
}
