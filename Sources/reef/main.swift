import ReefCLI

ReefCommand.main()
