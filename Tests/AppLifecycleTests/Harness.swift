import AppLifecycle
@_spi(Testing) import MainLoop

/// A deterministic loop, an application and a delegate that records every
/// callback and engine event as a line, and flags app code that runs while
/// the app runs no code.
final class Harness: ApplicationDelegate {
    let loop: MainRunLoop
    let app: Application
    var lines: [String] = []
    var appCodeWhileNotRunning: [String] = []
    /// Seconds didEnterBackground blocks the main thread.
    var didEnterBackgroundBlocks: Duration?

    init(_ configure: (inout LifecycleConfiguration) -> Void = { _ in }) throws {
        loop = try MainRunLoop(deterministic: true)
        var configuration = LifecycleConfiguration()
        configure(&configuration)
        app = try Application(loop: loop, configuration: configuration)
        app.delegate = self
        app.addEngineObserver { [unowned self] event in
            switch event {
            case .stateChanged(let state): self.lines.append("state \(state)")
            case .killed(let reason): self.lines.append("killed \(reason)")
            case .inputDiscarded(let input): self.lines.append("discarded \(input)")
            case .localNotificationPresented(let label): self.lines.append("presented \(label)")
            case .commandRejected(let command, _): self.lines.append("rejected \(command)")
            case .systemEventRefused(let error): self.lines.append("refused \(error)")
            case .memoryWarning(let delivered): self.lines.append("memoryWarning delivered=\(delivered)")
            case .appSourceFailed(let descriptor, let error): self.lines.append("appSourceFailed \(descriptor) \(error)")
            }
        }
    }

    var now: Double { loop.now.seconds }

    /// Records app code and checks it may run.
    func appCode(_ line: String) {
        if !app.state.runsAppCode { appCodeWhileNotRunning.append("\(line) in \(app.state)") }
        lines.append(line)
    }

    func perform(_ command: LifecycleCommand) throws { try app.perform(command) }

    func advance(to seconds: Double) throws { try loop.advance(to: LoopInstant(nanoseconds: Int64(seconds * 1e9))) }

    /// Lines since the last call.
    func take() -> [String] {
        defer { lines.removeAll() }
        return lines
    }

    func applicationWillFinishLaunching(_ application: Application) { appCode("willFinishLaunching") }
    func applicationDidFinishLaunching(_ application: Application) { appCode("didFinishLaunching") }
    func applicationDidBecomeActive(_ application: Application) { appCode("didBecomeActive") }
    func applicationWillResignActive(_ application: Application) { appCode("willResignActive") }
    func applicationDidEnterBackground(_ application: Application) {
        appCode("didEnterBackground")
        if let didEnterBackgroundBlocks { loop.blockMainThread(for: didEnterBackgroundBlocks) }
    }
    func applicationWillEnterForeground(_ application: Application) { appCode("willEnterForeground") }
    func applicationWillTerminate(_ application: Application) { appCode("willTerminate") }
    func application(_ application: Application, didReceiveInput input: String) { appCode("input \(input)") }
    func application(_ application: Application, didReceiveLocalNotification label: String) {
        appCode("local \(label)")
    }
}
