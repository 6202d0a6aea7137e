"""What tests run beside LawDesk: scripted model servers on loopback, a fake NVML, LawDesk's own processes, and
builders of test documents. Nothing here is collected as a test."""
