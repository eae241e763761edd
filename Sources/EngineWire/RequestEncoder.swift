import AppLifecycle
import MainLoop
import MainLoopJSON

/// Writes requests in the form ``RequestDecoder`` reads (BEHAVIOUR.md §6), so
/// what a live session did can be written down and read back as scenario
/// steps: `decodeRequest(encode(r))` is `r` for every request but a query.
public enum RequestEncoder {
    /// A request's key and body, `("lifecycle", "launch")`. A system event
    /// is already in its JSON form (``EngineRequest/system(_:)``).
    public static func keyAndBody(_ request: EngineRequest) -> (key: String, body: JSONValue) {
        switch request {
        case .lifecycle(let command): return ("lifecycle", .string(command.rawValue))
        case .system(let json): return ("system", json)
        case .input(let id): return ("input", .string(id))
        case .memoryWarning: return ("memoryWarning", true)
        case .app(let action): return ("app", .object(json(action)))
        case .query(let query): return ("query", .string(query.rawValue))
        }
    }

    /// An app action's object, `{"timer": "t", "after": 0.5}`.
    public static func json(_ action: AppAction) -> JSONObject {
        switch action {
        case .beginBackgroundTask(let name): return [action.name: .string(name)]
        case .endBackgroundTask(let name): return [action.name: .string(name)]
        case .post(let label): return [action.name: .string(label)]
        case .timerAfter(let label, let delay): return JSONObject([("timer", .string(label)), ("after", seconds(delay))])
        case .timerEvery(let label, let interval): return JSONObject([("timer", .string(label)), ("every", seconds(interval))])
        case .cancelTimer(let label): return [action.name: .string(label)]
        case .startService(let mode): return [action.name: .string(mode)]
        case .stopService(let mode): return [action.name: .string(mode)]
        case .setKeepAliveTimeout(let timeout): return [action.name: seconds(timeout)]
        case .scheduleLocalNotification(let label, let delay):
            return JSONObject([(action.name, .string(label)), ("after", seconds(delay))])
        case .blockMainThread(let duration): return [action.name: seconds(duration)]
        case .onDidEnterBackgroundBlock(let duration): return [action.name: .object(["blockMainThread": seconds(duration)])]
        case .submitScheduledTask(let request):
            var object = JSONObject([(action.name, .string(request.identifier)), ("kind", .string(request.kind.rawValue)),
                                     ("after", seconds(request.earliestBeginAfter))])
            if request.kind == .processing {
                object["requiresExternalPower"] = .bool(request.requiresExternalPower)
                object["requiresNetworkConnectivity"] = .bool(request.requiresNetworkConnectivity)
            }
            return object
        case .cancelScheduledTask(let identifier): return [action.name: .string(identifier)]
        case .completeScheduledTask(let identifier, let success):
            return JSONObject([(action.name, .string(identifier)), ("success", .bool(success))])
        }
    }

    /// A duration as exact decimal seconds (what ``SpecTime/duration(_:field:positive:)`` reads back).
    public static func seconds(_ duration: Duration) -> JSONValue {
        SpecTime.json(.zero + duration)
    }
}
