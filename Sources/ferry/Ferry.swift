import ArgumentParser
@main struct Ferry: AsyncParsableCommand {
    func run() async throws {}
}
