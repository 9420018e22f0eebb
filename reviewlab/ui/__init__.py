"""What people look at: charts, policy widgets, the dashboard, the HTML report, the demo."""
