"""Run: build the launcher and both programs, prepare fixtures and servers, and take the plan's
samples one by one through the launcher, storing each as it is taken."""
