import Foundation
import PackagePlugin

/// Compiles a target's `Resources` folder into the target as Swift source, so the `ferry` binary
/// carries its web app and OpenAPI document and runs from any folder: a resource bundle would be
/// looked up next to the build folder at run time.
@main
struct EmbedResources: BuildToolPlugin {
    func createBuildCommands(context: PluginContext, target: any Target) throws -> [Command] {
        let root = target.directoryURL.appending(path: "Resources")
        let files = Self.files(under: root)
        let output = context.pluginWorkDirectoryURL.appending(path: "EmbeddedResources+Files.swift")
        return [
            .buildCommand(
                displayName: "Embedding \(files.count) resource files of \(target.name)",
                executable: try context.tool(named: "ResourceEmbedder").url,
                arguments: [output.path, root.path] + files.map(\.path),
                inputFiles: files,
                outputFiles: [output]
            )
        ]
    }

    /// Every regular file below `root`, in a stable order; hidden files are left out.
    static func files(under root: URL) -> [URL] {
        let enumerator = FileManager.default.enumerator(
            at: root, includingPropertiesForKeys: [.isRegularFileKey], options: [.skipsHiddenFiles]
        )
        var files: [URL] = []
        while let url = enumerator?.nextObject() as? URL {
            if (try? url.resourceValues(forKeys: [.isRegularFileKey]).isRegularFile) == true { files.append(url) }
        }
        return files.sorted { $0.path < $1.path }
    }
}
