/// The app's side of the lifecycle: the delegate callbacks of BEHAVIOUR.md §1 plus
/// input and local notifications. Every method has an empty default.
/// All of them run on the main loop thread, and only while the app runs
/// code (never while suspended or not running).
public protocol ApplicationDelegate: AnyObject {
    func applicationWillFinishLaunching(_ application: Application)
    func applicationDidFinishLaunching(_ application: Application)
    func applicationDidBecomeActive(_ application: Application)
    func applicationWillResignActive(_ application: Application)
    /// Save state here (`AtomicFile` in FileSupport writes a file whole): a suspended app can be purged
    /// without notice. Must return within `didEnterBackgroundLimit`.
    func applicationDidEnterBackground(_ application: Application)
    func applicationWillEnterForeground(_ application: Application)
    func applicationWillTerminate(_ application: Application)
    /// User input; only delivered while active.
    func application(_ application: Application, didReceiveInput input: String)
    /// A local notification that fired while the app was active.
    func application(_ application: Application, didReceiveLocalNotification label: String)
    /// The system is short of memory (on Linux: a PSI memory-pressure
    /// trigger fired): free caches and whatever can be rebuilt. Delivered
    /// while the app runs code (inactive, active, background).
    func applicationDidReceiveMemoryWarning(_ application: Application)
}

extension ApplicationDelegate {
    public func applicationWillFinishLaunching(_ application: Application) {}
    public func applicationDidFinishLaunching(_ application: Application) {}
    public func applicationDidBecomeActive(_ application: Application) {}
    public func applicationWillResignActive(_ application: Application) {}
    public func applicationDidEnterBackground(_ application: Application) {}
    public func applicationWillEnterForeground(_ application: Application) {}
    public func applicationWillTerminate(_ application: Application) {}
    public func application(_ application: Application, didReceiveInput input: String) {}
    public func application(_ application: Application, didReceiveLocalNotification label: String) {}
    public func applicationDidReceiveMemoryWarning(_ application: Application) {}
}
