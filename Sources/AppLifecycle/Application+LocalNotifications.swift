import MainLoop

extension Application {
    /// Schedules a local notification `delay` from now. At its date it is
    /// delivered to the app if the app is active, otherwise presented by the
    /// system without waking the app. At most
    /// `maxScheduledLocalNotifications` stay scheduled: the soonest win, so
    /// scheduling past the cap drops the latest one (possibly this one).
    ///
    /// - Returns: whether this notification is among those kept.
    /// - Throws: ``LifecycleError/appNotRunning(action:state:)`` while the
    ///   app runs no code.
    @discardableResult
    public func scheduleLocalNotification(_ label: String, after delay: Duration) throws(LifecycleError) -> Bool {
        try requireAppCode("scheduleLocalNotification")
        let notification = ScheduledLocalNotification(label: label, fireDate: loop.now + delay,
                                                      number: nextLocalNotificationNumber)
        nextLocalNotificationNumber += 1
        let index = localNotifications.firstIndex { notification.firesBefore($0) } ?? localNotifications.count
        guard index < configuration.maxScheduledLocalNotifications else { return false }
        localNotifications.insert(notification, at: index)
        while localNotifications.count > configuration.maxScheduledLocalNotifications {
            localNotifications.removeLast().timer?.cancel()
        }
        notification.timer = loop.scheduleTimer(after: delay) { [weak self, weak notification] in
            guard let self, let notification else { return }
            self.localNotificationFired(notification)
        }
        return true
    }

    /// The labels of the scheduled local notifications, soonest first.
    public var scheduledLocalNotificationLabels: [String] { localNotifications.map(\.label) }

    private func localNotificationFired(_ notification: ScheduledLocalNotification) {
        localNotifications.removeAll { $0 === notification }
        if state == .active {
            delegate?.application(self, didReceiveLocalNotification: notification.label)
        } else {
            emit(.localNotificationPresented(notification.label))
        }
    }
}
