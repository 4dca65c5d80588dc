// Package examples holds runnable programs that show helikon end to end. Each
// is a main package in its own directory:
//
//	budget_assistant  an LLM agent with two typed function tools (the seed's
//	                  budget assistant), on OpenAI
//	explore_sandbox   Read, Write, Edit and Bash over a directory, assembled by
//	                  package toolbox: Bash in the OS sandbox, file changes
//	                  allowed, commands only where allow rules say
//	loop_agent        a loop agent whose tool escalates to stop the loop
//
// They read OPENAI_API_KEY, and OPENAI_BASE_URL for an OpenAI-compatible
// server, and OPENAI_MODEL for the model id. Their tests run them against a
// local server that speaks OpenAI's wire format (provider/openai/openaitest).
//
// Each main.go reads alone and can be copied out of the repository: they
// repeat their set-up (the model from the environment, the runner, the
// error handling) rather than share a helper package that a copy could not
// import.
package examples
