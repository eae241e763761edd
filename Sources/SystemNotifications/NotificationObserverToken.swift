/// Identifies an observer for ``SystemNotificationCenter/removeObserver(_:)``.
public struct NotificationObserverToken: Hashable, Sendable {
    let id: Int
}

/// One registered observer. `isActive` is cleared on removal so a removal
/// during delivery takes effect for the rest of that delivery.
final class ObserverEntry {
    let token: NotificationObserverToken
    /// The kind slot observed, or -1 for every kind.
    let slot: Int
    let body: (SystemNotification) -> Void
    @exclusivity(unchecked) var isActive = true

    init(token: NotificationObserverToken, slot: Int, body: @escaping (SystemNotification) -> Void) {
        self.token = token
        self.slot = slot
        self.body = body
    }
}
