"""The form that counts and saves a deadline on the matter page. What can be counted is judged by
:func:`matters.deadlines.services.deadline_save`, whose refusals the view puts on the field at fault."""

from django import forms

from matters.deadlines.counting import RuleSet, Service
from matters.models import Deadline

RULE_CHOICES = [(RuleSet.FRCP.value, "Fed. R. Civ. P. 6 (district court)"),
                (RuleSet.FRAP.value, "Fed. R. App. P. 26 (court of appeals)")]
SERVICE_CHOICES = [
    (Service.NONE.value, "The period does not run from service"),
    (Service.ELECTRONIC.value, "Served electronically (nothing added)"),
    (Service.PERSONAL.value, "Served by hand or left at the office or home (nothing added)"),
    (Service.MAIL.value, "Served by mail (3 days added)"),
    (Service.CLERK.value, "Left with the clerk (3 days added)"),
    (Service.OTHER.value, "Other means consented to in writing (3 days added)"),
]


class DeadlineForm(forms.Form):
    """What a period is counted from and how: the fields of :func:`deadline_save`."""

    title = forms.CharField(max_length=300, label="What is due",
                            widget=forms.TextInput(attrs={"placeholder": "Opposition to the motion to dismiss"}))
    event_date = forms.DateField(label="Event date", widget=forms.DateInput(attrs={"type": "date"}),
                                 help_text="the day of service, entry of the order, or the hearing")
    event_time = forms.TimeField(label="Event time", required=False, widget=forms.TimeInput(attrs={"type": "time"}),
                                 help_text="for a period in hours")
    period = forms.IntegerField(min_value=1, max_value=8760, label="Period")
    unit = forms.ChoiceField(choices=Deadline.Unit.choices, initial=Deadline.Unit.DAYS, label="in")
    before = forms.BooleanField(required=False, label="counted back from the event (e.g. before a hearing)")
    rules = forms.ChoiceField(choices=RULE_CHOICES, initial=RuleSet.FRCP.value, label="Rules")
    service = forms.ChoiceField(choices=SERVICE_CHOICES, initial=Service.NONE.value, label="Service")
    state = forms.CharField(max_length=2, required=False, label="State holidays (two letters)",
                            help_text="the state where the district court sits (Rule 6(a)(6)(C)); blank: none")
