import MainLoop

/// A local notification waiting to fire. It belongs to the system: it
/// survives the app being killed.
final class ScheduledLocalNotification {
    let label: String
    let fireDate: LoopInstant
    /// Scheduling order, for ties between equal fire dates.
    let number: Int
    var timer: LoopTimer?

    init(label: String, fireDate: LoopInstant, number: Int) {
        self.label = label
        self.fireDate = fireDate
        self.number = number
    }

    func firesBefore(_ other: ScheduledLocalNotification) -> Bool {
        fireDate != other.fireDate ? fireDate < other.fireDate : number < other.number
    }
}
