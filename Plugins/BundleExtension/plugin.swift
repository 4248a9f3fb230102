import PackagePlugin
@main struct BundleExtension: CommandPlugin { func performCommand(context: PluginContext, arguments: [String]) async throws {} }
