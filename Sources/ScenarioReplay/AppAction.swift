/// An action the replay app takes (SPEC §6 `app` steps).
public enum AppAction: Equatable, Sendable {
    case beginBackgroundTask(name: String)
    case endBackgroundTask(name: String)
    case post(label: String)
    case timerAfter(label: String, seconds: Double)
    case timerEvery(label: String, seconds: Double)
    case cancelTimer(label: String)
    case startService(mode: String)
    case stopService(mode: String)
    case setKeepAliveTimeout(seconds: Double)
    case scheduleLocalNotification(label: String, seconds: Double)
    case blockMainThread(seconds: Double)
    /// From now on, didEnterBackground blocks the main thread this long.
    case onDidEnterBackgroundBlock(seconds: Double)

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
        }
    }
}
