import AppLifecycle

/// An action the app takes (BEHAVIOUR.md §7 `app` steps). Times are exact
/// durations (decimal seconds to the nanosecond).
public enum AppAction: Equatable, Sendable {
    case beginBackgroundTask(name: String)
    case endBackgroundTask(name: String)
    case post(label: String)
    case timerAfter(label: String, delay: Duration)
    case timerEvery(label: String, interval: Duration)
    case cancelTimer(label: String)
    case startService(mode: String)
    case stopService(mode: String)
    case setKeepAliveTimeout(Duration)
    case scheduleLocalNotification(label: String, delay: Duration)
    /// The app's main thread is busy this long.
    case blockMainThread(Duration)
    /// From now on (in this run), didEnterBackground blocks the main thread this long.
    case onDidEnterBackgroundBlock(Duration)
    /// Submits scheduled work (the replay app registers the identifier first if it must).
    case submitScheduledTask(ScheduledTaskRequest)
    /// Withdraws a waiting request.
    case cancelScheduledTask(identifier: String)
    /// Completes the running scheduled task `identifier`.
    case completeScheduledTask(identifier: String, success: Bool)

    /// The action's name, as a `rejected` line prints it.
    public var name: String {
        switch self {
        case .beginBackgroundTask: return "beginBackgroundTask"
        case .endBackgroundTask: return "endBackgroundTask"
        case .post: return "post"
        case .timerAfter, .timerEvery: return "timer"
        case .cancelTimer: return "cancelTimer"
        case .startService: return "startService"
        case .stopService: return "stopService"
        case .setKeepAliveTimeout: return "setKeepAliveTimeout"
        case .scheduleLocalNotification: return "scheduleLocalNotification"
        case .blockMainThread: return "blockMainThread"
        case .onDidEnterBackgroundBlock: return "onDidEnterBackground"
        case .submitScheduledTask: return "submitScheduledTask"
        case .cancelScheduledTask: return "cancelScheduledTask"
        case .completeScheduledTask: return "completeScheduledTask"
        }
    }
}
